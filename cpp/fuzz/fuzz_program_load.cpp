// libFuzzer harness for loading .pte programs through the Program C API: any
// bytes must be opened or refused with a message, and whatever opens must
// survive every metadata call, method loading and a run on the `test-host`
// provider with inputs shaped as the program says, without crashing, leaking
// or reading outside its buffers (program_exercise.h). The plugin's sources
// are compiled into this binary with the sanitizers (cpp/fuzz/CMakeLists.txt),
// so its TensorRTBackend registration and C API are this process's own.
#include <cstddef>
#include <cstdint>

#include "program_exercise.h"
#include "torch_tensorrt_executorch/c_api.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tte_fuzz::init_harness();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  TteProgram* program = nullptr;
  TteError error{};
  const TteProgramOptions options = tte_fuzz::open_options();
  const TteStatus status = tte_program_open_buffer(data, size, &options, &program, &error);
  if (status != TTE_OK) {
    tte_fuzz::check_error(status, error);
    tte_fuzz::check(program == nullptr, "a failed open returns no handle");
    return 0;
  }
  tte_fuzz::check(program != nullptr, "a successful open returns a handle");
  // The input's last bytes choose how the hostile run bends its tensors.
  const std::size_t tail = size < 16 ? size : 16;
  tte_fuzz::exercise_program(program, tte_fuzz::Choices{data + size - tail, tail});
  tte_program_close(program);
  return 0;
}
