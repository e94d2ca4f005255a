/*
 * What the test provider libraries export besides
 * `tte_engine_provider_entry`: counters tests read to see how the backend
 * drove a provider (how many enqueues a CUDA-graph replay saved, whether an
 * engine was destroyed, which load options arrived), and, in the CUDA
 * library, the provider variant that cannot be captured. Plain C, so Python
 * reaches it through ctypes.
 *
 *   libtte_test_provider_host.so: tte_engine_provider_entry ("test-host"),
 *     tte_test_host_provider_per_tensor ("test-host-per-tensor"),
 *     tte_test_provider_stats, tte_test_provider_reset_stats
 *   libtte_test_provider_cuda.so: tte_engine_provider_entry ("test-cuda"),
 *     tte_test_cuda_provider_uncapturable ("test-cuda-nocapture"),
 *     tte_test_provider_stats, tte_test_provider_reset_stats
 */
#ifndef TORCH_TENSORRT_EXECUTORCH_TEST_PROVIDER_API_H_
#define TORCH_TENSORRT_EXECUTORCH_TEST_PROVIDER_API_H_

#include <stdint.h>

#include "torch_tensorrt_executorch/engine_provider.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TTE_TEST_PROVIDER_EXPORT __attribute__((visibility("default")))

/* Counters of one provider library since it was loaded or last reset; the
 * two providers of the CUDA library share them. Append-only. */
typedef struct TteTestProviderStats {
  /* In: sizeof the caller's struct; the callee writes no byte past it and
   * sets it to the size it filled. A zeroed struct gets nothing. */
  uint32_t struct_size;
  /* The device_id of the last successful deserialize, -1 before any. */
  int32_t last_device_id;
  uint64_t deserializes; /* successful deserialize calls */
  uint64_t destroys;
  uint64_t enqueues; /* successful enqueue calls (a graph replay makes none) */
  uint64_t select_profiles;
  /* The stream of the last successful enqueue. */
  void* last_stream;
  /* The profile of the last select_profile call, -1 before any. */
  int32_t last_profile;
  /* The weight-streaming budget of the last successful deserialize. */
  int32_t last_has_weight_streaming_budget;
  int64_t last_weight_streaming_budget;
  /* Batched calls (TteEngineProvider.execute), and input shapes set by
   * either path: how often the backend entered the provider. */
  uint64_t executes;
  uint64_t input_shapes_set;
  /* Handles made by create_execution_context (sharing a deserialized
   * engine), set_device_memory calls, and the bytes the engines hold now:
   * their "weights" (once per deserialized engine) and the scratch they
   * allocated themselves (engines without user-managed memory). */
  uint64_t execution_contexts;
  uint64_t device_memory_sets;
  int64_t live_weight_bytes;
  int64_t live_own_scratch_bytes;
  /* The most enqueues that ran at once on one deserialized engine and one
   * optimization profile (host provider: while an enqueue is inside the
   * provider). TensorRT forbids more than one for engines with dynamic
   * shapes. */
  uint64_t max_profile_overlap;
} TteTestProviderStats;

TTE_TEST_PROVIDER_EXPORT void tte_test_provider_stats(TteTestProviderStats* out);
TTE_TEST_PROVIDER_EXPORT void tte_test_provider_reset_stats(void);

/* Host library only: provider "test-host-per-tensor", the engines of
 * "test-host" as a provider built against the version 1 header, whose struct
 * ends at `destroy` (no batched entry): the backend's per-tensor path. */
TTE_TEST_PROVIDER_EXPORT const TteEngineProvider* tte_test_host_provider_per_tensor(void);

/* CUDA library only: provider "test-cuda-nocapture", the engines of
 * "test-cuda" with enqueue_capturable = 0, for the CUDA-graph fallback. Its
 * ABI version is TTE_ENGINE_PROVIDER_ABI_VERSION of this header. */
TTE_TEST_PROVIDER_EXPORT const TteEngineProvider* tte_test_cuda_provider_uncapturable(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_TENSORRT_EXECUTORCH_TEST_PROVIDER_API_H_ */
