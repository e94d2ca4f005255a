// The engine address of every delegate argument on one call, and the copies
// that make it addressable: the one place where the delegate stages memory.
// A device engine reads device memory (and, on integrated GPUs, pinned host
// memory and pageable memory where the device can read it), so other host
// tensors are staged through device buffers; a host engine reads host
// memory, so device tensors are staged through host buffers. Where the device
// traits say so (integrated GPUs; mapped_staging.h), pageable host tensors are
// staged through mapped page-locked memory instead: a CPU copy, and the engine
// uses the buffer's device address (no DMA); page-locked host tensors are used
// where they lie. Every address an
// engine gets is 256-byte aligned, TensorRT's rule for setTensorAddress
// (NvInferRuntime.h, IExecutionContext::setTensorAddress: "The pointer must
// have at least 256-byte alignment"): ExecuTorch plans tensors 16-byte
// aligned and callers pass offset views, so a misaligned tensor is staged
// too. Outputs written in place share their input's address; empty tensors
// get a placeholder, since engines refuse NULL addresses.
#pragma once

#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "backend/call_checks.h"
#include "backend/engine_io.h"
#include "backend/mapped_staging.h"
#include "common/read_only_memory.h"
#include "common/status.h"
#include "cuda/cuda_device.h"
#include "cuda/device_buffers.h"

namespace tte {

// Where one argument's engine address comes from on this call.
struct Binding {
  void* address = nullptr;  // what the engine reads or writes
  void* data = nullptr;     // the ExecuTorch tensor's memory
  size_t nbytes = 0;
  bool staged = false;  // `address` is a staging buffer, not `data`
  // Mapped memory the CPU reaches: with mapped staging, the staging buffer
  // (`address` is the device's address of `mapped`), or page-locked memory
  // the engine uses where it lies (`mapped` is `data`). The CPU copies into
  // and out of it.
  void* mapped = nullptr;
  PointerKind kind = PointerKind::kUnregistered;
};

// Where an engine reads and writes.
struct EngineMemory {
  bool host = false;  // a TTE_MEMORY_HOST provider
  int device = -1;    // device engines: the engine's device (current during calls)
  DeviceTraits traits;
};

// The alignment every engine address has (TensorRT's setTensorAddress rule).
inline constexpr size_t kEngineAddressAlignment = 256;

class TensorBinder {
 public:
  explicit TensorBinder(EngineMemory memory);
  TensorBinder(const TensorBinder&) = delete;
  TensorBinder& operator=(const TensorBinder&) = delete;

  // Fills one Binding per argument. Input copies into staging run on
  // `stream` for device engines (returning once the caller's memory may
  // change), synchronously for host engines. An output written in place
  // into an input that lies in `read_only` memory is refused.
  Status bind(const EngineIo& io, DelegateArgs args, cudaStream_t stream,
              const ReadOnlyLoans& read_only, std::vector<Binding>* bindings);
  // After the engine ran: copies staged outputs, and staged inputs the
  // engine updated in place, back into the tensors' memory.
  Status write_back(const EngineIo& io, const std::vector<Binding>& bindings, cudaStream_t stream);

 private:
  // The address the engine may use for the tensor as it is, or NULL.
  void* engine_address(const PointerInfo& info, void* data) const;
  Status stage_input_or_output(size_t a, const std::string& name, bool is_input,
                               cudaStream_t stream, Binding* binding);
  Status stage_through_mapped(size_t a, const std::string& name, bool is_input, Binding* binding);
  cudaError_t copy_out(void* dst, PointerKind kind, const Binding& from, size_t nbytes,
                       cudaStream_t stream, bool* synchronized);
  void* zero_size_address();

  EngineMemory memory_;
  // Device engines: pageable host tensors go through mapped_staging_.
  bool stage_through_mapped_memory_ = false;
  // Per argument: device staging (device engines) or aligned host staging
  // (host engines, which run on machines without a GPU too).
  std::vector<DeviceBuffer> device_staging_;
  std::vector<AlignedHostBuffer> host_staging_;
  // Per argument, where device engines stage through mapped memory.
  std::vector<MappedHostBuffer> mapped_staging_;
  HostDeviceStager stager_;
  DeviceBuffer zero_size_device_;
};

}  // namespace tte
