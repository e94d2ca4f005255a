// ExecuTorch's CUDA DeviceAllocator for device-planned programs
// (target_device=cuda:N): the CPU ExecuTorch wheel registers none, and
// registering a second one aborts the process. Policy (DESIGN.md 2.4): step
// aside when one is registered; else load ExecuTorch's own CUDA backend
// library when it is installed beside libexecutorch.so (it registers its
// allocator); else register ours.
#pragma once

namespace tte {

// Applies the policy once; called when the plugin loads.
void install_cuda_allocator();

// Who provides the registered CUDA allocator: "torch_tensorrt_executorch",
// "executorch_cuda_backend", "other", or "none".
const char* cuda_allocator_owner();

}  // namespace tte
