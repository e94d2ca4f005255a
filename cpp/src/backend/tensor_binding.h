// The engine address of every delegate argument on one call, and the copies
// that make it addressable: the one place where the delegate stages memory.
// A device engine reads device memory (and host memory on integrated GPUs),
// so host tensors are staged through device buffers; a host engine reads
// host memory, so device tensors are staged through pinned host buffers.
// Outputs written in place share their input's address; empty tensors get a
// placeholder, since engines refuse NULL addresses.
#pragma once

#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "backend/call_checks.h"
#include "backend/engine_io.h"
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
  PointerKind kind = PointerKind::kUnregistered;
};

// Where an engine reads and writes.
struct EngineMemory {
  bool host = false;  // a TTE_MEMORY_HOST provider
  int device = -1;    // device engines: the engine's device (current during calls)
  bool integrated = false;
};

class TensorBinder {
 public:
  explicit TensorBinder(EngineMemory memory) : memory_(memory) {}
  TensorBinder(const TensorBinder&) = delete;
  TensorBinder& operator=(const TensorBinder&) = delete;

  // Fills one Binding per argument. Input copies into staging run on
  // `stream` for device engines (returning once the caller's memory may
  // change), synchronously for host engines.
  Status bind(const EngineIo& io, DelegateArgs args, cudaStream_t stream,
              std::vector<Binding>* bindings);
  // After the engine ran: copies staged outputs, and staged inputs the
  // engine updated in place, back into the tensors' memory.
  Status write_back(const EngineIo& io, const std::vector<Binding>& bindings, cudaStream_t stream);

 private:
  bool engine_addressable(const PointerInfo& info) const;
  Status stage_input_or_output(size_t a, const std::string& name, bool is_input,
                               cudaStream_t stream, Binding* binding);
  cudaError_t copy_out(void* dst, PointerKind kind, const void* src, size_t nbytes,
                       cudaStream_t stream);
  void* zero_size_address();

  EngineMemory memory_;
  // Per argument: device staging (device engines) or pinned host staging
  // (host engines).
  std::vector<DeviceBuffer> device_staging_;
  std::vector<PinnedHostBuffer> host_staging_;
  HostDeviceStager stager_;
  DeviceBuffer zero_size_device_;
};

}  // namespace tte
