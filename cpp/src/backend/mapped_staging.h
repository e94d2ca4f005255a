// Whether device engines stage host tensors through mapped page-locked
// memory (TensorBinder): the default on integrated GPUs, whose device and
// host memory are the same DRAM, so a host tensor costs one CPU copy and no
// DMA; an environment variable overrides it.
#pragma once

namespace tte {

// Read when a delegate loads: "1" turns mapped staging on for any GPU
// (discrete GPUs read mapped memory over the bus: slower, but it runs the
// integrated GPUs' path on any machine), "0" turns it off.
inline constexpr const char* kMappedStagingEnv = "TORCH_TENSORRT_EXECUTORCH_MAPPED_STAGING";

// The choice, given the variable's value (NULL when unset) and whether the
// GPU is integrated. Any other value keeps the default and is reported once.
bool mapped_staging_from_env(const char* value, bool integrated);

}  // namespace tte
