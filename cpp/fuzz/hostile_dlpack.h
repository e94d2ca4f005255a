// DLPack tensors as a careless or hostile producer hands them over: a rank
// past the method's (up to INT32_MAX, or negative) with a shape array only
// as long as the method's rank, odd strides, odd byte offsets (into memory
// that is there: what data + byte_offset points at is the producer's
// promise, which no consumer can check), NULL data with
// and without elements. The fuzzer chooses which from bytes of its input.
// Built on the heap with exactly the entries given, so a reader that looks
// past them is an AddressSanitizer report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte_fuzz {

struct HostileTensor {
  std::unique_ptr<std::int64_t[]> shape;
  std::unique_ptr<std::int64_t[]> strides;
  std::vector<std::uint8_t> bytes;
  DLTensor tensor{};
  // DLPack flags passed in TteInput.int_value (the read-only bit, or none).
  std::int64_t flags = 0;
};

// A tensor for an input of `rank` dims with `sizes` (the method's) and
// `dtype`, bent as `choice` says; `bytes` of memory (zeros) back it where
// it has data.
void make_hostile_tensor(std::uint8_t choice, std::int32_t rank, const std::int64_t* sizes,
                         DLDataType dtype, std::size_t bytes, HostileTensor& out);

}  // namespace tte_fuzz
