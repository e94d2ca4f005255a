// libFuzzer harness for .ptd (external data) files: each input is given as
// the only .ptd of one fixed program with external constants
// (TTE_FUZZ_DATA_FILE_PROGRAM, a seed of the program corpus) and must be
// refused with a message or serve the program, which is then exercised as
// fuzz_program_load does. ExecuTorch reads .ptd files without the flatbuffers
// Verifier, so this is where a damaged file would reach its accessors.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "program_exercise.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

std::vector<char>& program_bytes() {
  static std::vector<char> bytes;
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tte_fuzz::init_harness();
  const char* path = std::getenv("TTE_FUZZ_DATA_FILE_PROGRAM");
  if (path == nullptr) path = TTE_FUZZ_DATA_FILE_PROGRAM;
  std::ifstream file(path, std::ios::binary);
  program_bytes().assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  if (program_bytes().empty()) {
    std::fprintf(stderr, "cannot read the program %s\n", path);
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  TteProgramOptions options = tte_fuzz::open_options();
  const TteBuffer buffer{data, size};
  options.data_buffers = &buffer;
  options.num_data_buffers = 1;
  TteProgram* program = nullptr;
  TteError error{};
  const std::vector<char>& pte = program_bytes();
  const TteStatus status =
      tte_program_open_buffer(pte.data(), pte.size(), &options, &program, &error);
  if (status != TTE_OK) {
    tte_fuzz::check_error(status, error);
    tte_fuzz::check(program == nullptr, "a failed open returns no handle");
    return 0;
  }
  // The input's last bytes choose how the hostile run bends its tensors.
  const std::size_t tail = size < 16 ? size : 16;
  tte_fuzz::exercise_program(program, tte_fuzz::Choices{data + size - tail, tail});
  tte_program_close(program);
  return 0;
}
