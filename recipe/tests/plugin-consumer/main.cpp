// Checks that the plugin registered TensorRTBackend and reports its versions.
#include <torch_tensorrt_executorch/c_api.h>

#include <cstdio>

int main() {
  std::printf("torch-tensorrt-executorch %s, C API %u, ExecuTorch %s\n", tte_version(),
              tte_c_api_version(), tte_executorch_version());
  if (!tte_owns_backend_registration()) {
    std::printf("TensorRTBackend is not registered by this plugin\n");
    return 1;
  }
  return 0;
}
