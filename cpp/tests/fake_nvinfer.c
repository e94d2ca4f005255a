/* A stand-in for a TensorRT runtime library, built by the native provider's
 * test in several versions (FAKE_TENSORRT_VERSION, as getInferLibVersion
 * packs it) so the provider's run-time search and version checks can be
 * watched without TensorRT. It exports the two symbols the provider takes;
 * creating a runtime "fails" (NULL). */
#include <stdint.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

FAKE_EXPORT int32_t getInferLibVersion(void) { return FAKE_TENSORRT_VERSION; }

FAKE_EXPORT void* createInferRuntime_INTERNAL(void* logger, int32_t version) {
  (void)logger;
  (void)version;
  return 0;
}
