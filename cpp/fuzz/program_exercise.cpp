#include "program_exercise.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hostile_dlpack.h"
#include "program/dlpack_convert.h"

namespace tte_fuzz {

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "Program API broke a promise: %s\n", what);
    std::abort();
  }
}

namespace {

// Inputs larger than this are not allocated (a mutated size can claim
// gigabytes); the method is still loaded and described.
constexpr std::uint64_t kMaxInputBytes = 1u << 20;
// Methods declaring larger unplanned outputs are not run (the Program API
// reserves their declared size): such a request is legitimate, and
// honouring it would only measure the machine.
constexpr std::uint64_t kMaxOutputBytes = kMaxPlannedBytes;

// "...: Error::InvalidState (0x2)": the message ends in an ExecuTorch code
// and says nothing else after the call that failed.
bool is_bare_code(const char* message) {
  const char* code = std::strstr(message, "Error::");
  if (code == nullptr) return false;
  while (const char* next = std::strstr(code + 1, "Error::")) code = next;
  if (code - message < 2 || std::strncmp(code - 2, ": ", 2) != 0) return false;
  const char* open = std::strstr(code, " (0x");
  return open != nullptr && std::strchr(open, ')') != nullptr && std::strchr(open, ')')[1] == '\0';
}

// A host tensor of zeros shaped as the program's input info.
struct InputTensor {
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
  DLTensor tensor{};
};

bool make_input(const TteValueInfo& info, InputTensor& out) {
  if (info.rank < 0 || info.rank > TTE_MAX_RANK) return false;
  if (info.scalar_type < 0 || info.scalar_type > INT8_MAX) return false;
  const auto dtype = tte::dlpack_from_scalar_type(static_cast<tte::ScalarType>(info.scalar_type));
  if (!dtype.has_value()) return false;
  std::uint64_t count = 1;
  for (std::int32_t d = 0; d < info.rank; ++d) {
    const std::int64_t size = info.sizes[d];
    if (size < 0) return false;
    out.shape.push_back(size);
    if (size != 0 && count > kMaxInputBytes / static_cast<std::uint64_t>(size)) return false;
    count *= static_cast<std::uint64_t>(size);
  }
  const std::uint64_t element = (static_cast<std::uint64_t>(dtype->bits) * dtype->lanes + 7) / 8;
  if (element == 0 || count > kMaxInputBytes / element) return false;
  out.bytes.assign(static_cast<std::size_t>(count * element), 0);
  out.tensor.data = out.bytes.empty() ? nullptr : out.bytes.data();
  out.tensor.device = DLDevice{kDLCPU, 0};
  out.tensor.ndim = info.rank;
  out.tensor.dtype = *dtype;
  out.tensor.shape = out.shape.data();
  return true;
}

void release(std::vector<TteOutput>& outputs) {
  for (TteOutput& out : outputs) {
    if (out.tag == TTE_VALUE_TENSOR) {
      check(out.tensor != nullptr, "a tensor output has a tensor");
      out.tensor->deleter(out.tensor);
    } else {
      check(out.tensor == nullptr, "only tensor outputs carry a tensor");
    }
  }
}

// One more run with every tensor input bent as the fuzzer's `choices` say
// (hostile_dlpack.h): refused with a message that explains, or run.
void run_hostile(TteProgram* program, const char* method, const std::vector<TteInput>& inputs,
                 const std::vector<TteValueInfo>& infos, const std::vector<InputTensor>& tensors,
                 std::size_t num_outputs, const Choices& choices) {
  std::vector<HostileTensor> hostile(inputs.size());
  std::vector<TteInput> bent = inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].tag != TTE_VALUE_TENSOR) continue;
    const std::uint8_t choice = choices.data[i % choices.size] ^ static_cast<std::uint8_t>(i * 37);
    make_hostile_tensor(choice, infos[i].rank, infos[i].sizes, tensors[i].tensor.dtype,
                        tensors[i].bytes.size(), hostile[i]);
    bent[i].tensor = &hostile[i].tensor;
    bent[i].int_value = hostile[i].flags;
  }
  TteError error{};
  std::vector<TteOutput> outputs(num_outputs);
  const int copy = choices.data[0] & 1;
  const TteStatus status = tte_program_run(program, method, bent.data(), bent.size(), copy,
                                           outputs.data(), outputs.size(), &error);
  if (status != TTE_OK) check_error(status, error);
  release(outputs);
}

void exercise_method(TteProgram* program, const char* method, const Choices& choices) {
  // Reading I/O info already loads the method (for its actual sizes).
  TteError error{};
  std::size_t num_inputs = 0;
  std::size_t num_outputs = 0;
  TteStatus status =
      tte_program_method_io_count(program, method, &num_inputs, &num_outputs, &error);
  if (status != TTE_OK) {
    check_error(status, error);
    return;
  }
  std::vector<InputTensor> tensors(num_inputs);
  std::vector<TteInput> inputs(num_inputs);
  std::vector<TteValueInfo> infos(num_inputs);
  for (std::size_t i = 0; i < num_inputs; ++i) {
    TteValueInfo& info = infos[i];
    status = tte_program_input_info(program, method, i, &info, &error);
    if (status != TTE_OK) {
      check_error(status, error);
      return;
    }
    TteInput& in = inputs[i];
    in.tag = info.tag;
    if (info.tag == TTE_VALUE_TENSOR) {
      if (!make_input(info, tensors[i])) return;
      in.tensor = &tensors[i].tensor;
    } else if (info.tag == TTE_VALUE_INT || info.tag == TTE_VALUE_BOOL) {
      in.int_value = 1;
      in.bool_value = 1;
    } else if (info.tag == TTE_VALUE_DOUBLE) {
      in.double_value = 1.0;
    }
  }
  std::uint64_t output_bytes = 0;
  for (std::size_t i = 0; i < num_outputs; ++i) {
    TteValueInfo info{};
    status = tte_program_output_info(program, method, i, &info, &error);
    if (status != TTE_OK) {
      check_error(status, error);
    } else if (info.tag == TTE_VALUE_TENSOR) {
      output_bytes += std::min<std::uint64_t>(info.nbytes, kMaxOutputBytes + 1);
    }
  }
  status = tte_program_load_method(program, method, &error);
  if (status != TTE_OK) {
    check_error(status, error);
    return;
  }
  // Outputs the program does not plan get buffers of their declared size.
  if (num_outputs > 64 || output_bytes > kMaxOutputBytes) return;
  for (int copy = 0; copy <= 1; ++copy) {
    std::vector<TteOutput> outputs(num_outputs);
    status = tte_program_run(program, method, inputs.data(), inputs.size(), copy, outputs.data(),
                             outputs.size(), &error);
    if (status != TTE_OK) check_error(status, error);
    release(outputs);
  }
  if (choices.size > 0) {
    run_hostile(program, method, inputs, infos, tensors, num_outputs, choices);
  }
}

}  // namespace

void check_error(TteStatus status, const TteError& error) {
  check(status != TTE_OK, "a failure has a status");
  check(error.code == status, "the error carries the returned status");
  check(std::memchr(error.message, '\0', sizeof(error.message)) != nullptr,
        "the message is terminated");
  check(error.message[0] != '\0', "a failure has a message");
  if (is_bare_code(error.message)) {
    std::fprintf(stderr, "message: %s\n", error.message);
  }
  check(!is_bare_code(error.message), "a failure says more than an ExecuTorch code");
}

void init_harness() {
  tte_set_log_level(std::getenv("TTE_FUZZ_VERBOSE") != nullptr ? TTE_LOG_DEBUG : TTE_LOG_OFF);
  const char* provider = std::getenv("TTE_FUZZ_HOST_PROVIDER");
  if (provider == nullptr) provider = TTE_FUZZ_HOST_PROVIDER;
  TteError error{};
  if (tte_load_engine_provider_library(provider, TTE_PROVIDER_OTHER, &error) != TTE_OK) {
    std::fprintf(stderr, "cannot register the host test provider %s: %s\n", provider,
                 error.message);
    std::abort();
  }
}

TteProgramOptions open_options() {
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.max_planned_memory = kMaxPlannedBytes;
  return options;
}

void exercise_program(TteProgram* program, const Choices& choices) {
  TteError error{};
  std::size_t count = 0;
  if (tte_program_num_methods(program, &count, &error) == TTE_OK) {
    for (std::size_t i = 0; i < count && i < 16; ++i) {
      const char* name = nullptr;
      if (tte_program_method_name(program, i, &name, &error) != TTE_OK) continue;
      check(name != nullptr, "a method has a name");
      exercise_method(program, name, choices);
    }
    const char* past_end = nullptr;
    check(tte_program_method_name(program, count, &past_end, &error) != TTE_OK,
          "no method past the count");
  }
  char* json = nullptr;
  const TteStatus described = tte_program_describe_json(program, &json, &error);
  if (described == TTE_OK) {
    check(json != nullptr && json[0] == '{', "the description is a JSON object");
    tte_free_string(json);
  } else {
    check_error(described, error);
  }
}

}  // namespace tte_fuzz
