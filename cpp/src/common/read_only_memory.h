// Memory a caller lent read-only for one call: the Program API lends the
// inputs whose DLPack tensors carry DLPACK_FLAG_BITMASK_READ_ONLY (passed in
// TteInput.int_value), and a delegate that is about to write an input in
// place (TensorRTBackend's aliased_io, e.g. a KV-cache update) asks whether
// that input's memory is among them and refuses the call if so. The loans
// belong to the call (CallContext::read_only, call_context.h).
// The check lives where the write happens: only the delegate knows which of
// its arguments it updates in place, and only by address can it tell the
// caller's memory from a copy ExecuTorch or the Program API made of it.
// Calls through the stock runtime lend nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tte {

class ReadOnlyLoans {
 public:
  // [data, data + size) is read-only; `label` names it ("input 1 of
  // 'forward' ('cache')"). Empty ranges lend nothing.
  void add(const void* data, size_t size, std::string label);

  // The label of lent memory that overlaps [data, data + size), or nullptr.
  const std::string* label_of(const void* data, size_t size) const;

  bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    uintptr_t begin;
    uintptr_t end;
    std::string label;
  };
  std::vector<Range> ranges_;
};

}  // namespace tte
