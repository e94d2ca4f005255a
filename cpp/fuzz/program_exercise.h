// What the Program API harnesses (fuzz_program_load, fuzz_data_file_load)
// do with a program once it is open, and the promises they check on every
// call: a failure has a status, the same code in the TteError, a terminated
// message that says more than an ExecuTorch code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte_fuzz {

// Aborts (a finding) with `what` unless `condition`.
void check(bool condition, const char* what);
// The promises of a failed call.
void check_error(TteStatus status, const TteError& error);

// Silences the plugin's log (TTE_FUZZ_VERBOSE=1 shows it, ExecuTorch's lines
// included) and registers the test-host provider.
void init_harness();

// Methods may plan at most this much host memory (the load option): a
// larger request is legitimate, and honouring it would only measure the
// machine.
constexpr std::uint64_t kMaxPlannedBytes = 64 << 20;

// Options to open a program with: max_planned_memory = kMaxPlannedBytes.
TteProgramOptions open_options();

// The fuzzer's say in how inputs are bent (hostile_dlpack.h): bytes of its
// input, used in turn for each tensor input.
struct Choices {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};
// Every method (up to 16): I/O count and info, load, two runs (views and
// copies) with zero inputs shaped as the info says, and, with `choices`, a
// third whose tensor inputs are bent; then the description.
void exercise_program(TteProgram* program, const Choices& choices);

}  // namespace tte_fuzz
