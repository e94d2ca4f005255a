// Initializes the runtime and checks that the primitive ops registered.
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdio>

int main() {
  executorch::runtime::runtime_init();
  const auto kernels = executorch::runtime::get_registered_kernels();
  std::printf("ExecuTorch runtime initialized, %zu kernels registered\n", kernels.size());
  return kernels.size() > 0 ? 0 : 1;
}
