// From a delegate blob to an engine: which registered provider deserializes
// the plan (the load option's, else the first that accepts it, never a
// device provider without the device), on which device.
#pragma once

#include "backend/load_options.h"
#include "backend/provider_registry.h"
#include "blob/blob_reader.h"
#include "common/status.h"

namespace tte {

// A deserialized engine and the provider that made it; the provider stays
// registered for as long as this reference lives.
struct LoadedEngine {
  ProviderRef provider;
  TteEngine* engine = nullptr;
  // The CUDA device the engine runs on; -1 for a host provider.
  int device = -1;
  bool integrated = false;  // `device` is an integrated GPU (Jetson)
};

Status load_engine(const DelegateBlob& blob, const LoadOptions& options, LoadedEngine* out);

}  // namespace tte
