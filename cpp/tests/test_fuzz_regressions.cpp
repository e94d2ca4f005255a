// Programs the .pte loading fuzzer found crashing the process
// (tests/fuzz/regressions/program/): each must be refused at open, from a
// buffer and from its file, as an invalid program with a message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "torch_tensorrt_executorch/c_api.h"

namespace {

std::vector<std::filesystem::path> regression_files() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path folder =
      std::filesystem::path(TTE_SOURCE_DIR) / "tests" / "fuzz" / "regressions" / "program";
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  return files;
}

TEST(FuzzRegressions, DamagedProgramsAreRefusedAtOpen) {
  const auto files = regression_files();
  ASSERT_GE(files.size(), 5u);
  for (const auto& path : files) {
    std::ifstream file(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
    TteProgram* program = nullptr;
    TteError error{};
    EXPECT_EQ(tte_program_open_buffer(bytes.data(), bytes.size(), nullptr, &program, &error),
              TTE_ERROR_INVALID_PROGRAM)
        << path;
    EXPECT_EQ(program, nullptr);
    EXPECT_NE(std::string(error.message).find("damaged"), std::string::npos) << error.message;
    error = TteError{};
    EXPECT_EQ(tte_program_open_file(path.c_str(), nullptr, &program, &error),
              TTE_ERROR_INVALID_PROGRAM)
        << path;
    EXPECT_EQ(program, nullptr);
    tte_program_close(program);
  }
}

}  // namespace
