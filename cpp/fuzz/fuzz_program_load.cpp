// libFuzzer harness for loading .pte programs through the Program C API: any
// bytes must be opened or refused with a message, and whatever opens must
// survive every metadata call, method loading and a run on the `test-host`
// provider with inputs shaped as the program says, without crashing, leaking
// or reading outside its buffers. The plugin's sources are compiled into
// this binary with the sanitizers (cpp/fuzz/CMakeLists.txt), so its
// TensorRTBackend registration and C API are this process's own.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/platform.h>

#include "program/dlpack_convert.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

// Inputs larger than this are not allocated (a mutated size can claim
// gigabytes); the method is still loaded and described.
constexpr std::uint64_t kMaxInputBytes = 1u << 20;
// Methods planning more memory than this, or declaring larger unplanned
// outputs, are not loaded or run: such a request is legitimate, and
// honouring it would only measure the machine.
constexpr std::int64_t kMaxPlannedBytes = 64 << 20;

namespace et = executorch::runtime;

void ignore_log(et_timestamp_t, et_pal_log_level_t, const char*, const char*, std::size_t,
                const char*, std::size_t) {}

// Total planned memory of each method, as ExecuTorch's own reader sees it;
// nullopt for a method it cannot describe (loading it fails anyway).
std::optional<std::int64_t> planned_bytes(const std::uint8_t* data, std::size_t size,
                                          const char* method) {
  executorch::extension::BufferDataLoader loader(data, size);
  auto program = et::Program::load(&loader, et::Program::Verification::InternalConsistency);
  if (!program.ok()) return std::nullopt;
  auto meta = program->method_meta(method);
  if (!meta.ok()) return std::nullopt;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    auto bytes = meta->memory_planned_buffer_size(i);
    if (!bytes.ok() || *bytes < 0 || *bytes > kMaxPlannedBytes) return kMaxPlannedBytes + 1;
    total += *bytes;
  }
  return total;
}

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "Program API broke a promise: %s\n", what);
    std::abort();
  }
}

void check_error(TteStatus status, const TteError& error) {
  check(status != TTE_OK, "a failure has a status");
  check(error.code == status, "the error carries the returned status");
  check(std::memchr(error.message, '\0', sizeof(error.message)) != nullptr, "the message is terminated");
  check(error.message[0] != '\0', "a failure has a message");
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

void exercise_method(TteProgram* program, const char* method, const std::uint8_t* data,
                     std::size_t size) {
  // Reading I/O info already loads the method (for its actual sizes).
  const auto planned = planned_bytes(data, size, method);
  if (planned.has_value() && *planned > kMaxPlannedBytes) return;
  TteError error{};
  std::size_t num_inputs = 0;
  std::size_t num_outputs = 0;
  TteStatus status = tte_program_method_io_count(program, method, &num_inputs, &num_outputs, &error);
  if (status != TTE_OK) {
    check_error(status, error);
    return;
  }
  std::vector<InputTensor> tensors(num_inputs);
  std::vector<TteInput> inputs(num_inputs);
  for (std::size_t i = 0; i < num_inputs; ++i) {
    TteValueInfo info{};
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
      output_bytes += std::min<std::uint64_t>(info.nbytes, kMaxPlannedBytes + 1);
    }
  }
  status = tte_program_load_method(program, method, &error);
  if (status != TTE_OK) {
    check_error(status, error);
    return;
  }
  // Outputs the program does not plan get buffers of their declared size.
  if (num_outputs > 64 || output_bytes > static_cast<std::uint64_t>(kMaxPlannedBytes)) return;
  for (int copy = 0; copy <= 1; ++copy) {
    std::vector<TteOutput> outputs(num_outputs);
    status = tte_program_run(program, method, inputs.data(), inputs.size(), copy, outputs.data(),
                             outputs.size(), &error);
    if (status != TTE_OK) check_error(status, error);
    release(outputs);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tte_set_log_level(TTE_LOG_OFF);
  if (std::getenv("TTE_FUZZ_VERBOSE") == nullptr) {
    et::register_pal(et::PalImpl::create(ignore_log, __FILE__));
  }
  const char* provider = std::getenv("TTE_FUZZ_HOST_PROVIDER");
  if (provider == nullptr) provider = TTE_FUZZ_HOST_PROVIDER;
  TteError error{};
  if (tte_load_engine_provider_library(provider, TTE_PROVIDER_OTHER, &error) != TTE_OK) {
    std::fprintf(stderr, "cannot register the host test provider %s: %s\n", provider, error.message);
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  TteProgram* program = nullptr;
  TteError error{};
  const TteStatus status = tte_program_open_buffer(data, size, nullptr, &program, &error);
  if (status != TTE_OK) {
    check_error(status, error);
    check(program == nullptr, "a failed open returns no handle");
    return 0;
  }
  check(program != nullptr, "a successful open returns a handle");

  std::size_t count = 0;
  if (tte_program_num_methods(program, &count, &error) == TTE_OK) {
    for (std::size_t i = 0; i < count && i < 16; ++i) {
      const char* name = nullptr;
      if (tte_program_method_name(program, i, &name, &error) != TTE_OK) continue;
      check(name != nullptr, "a method has a name");
      exercise_method(program, name, data, size);
    }
    const char* past_end = nullptr;
    check(tte_program_method_name(program, count, &past_end, &error) != TTE_OK,
          "no method past the count");
  }
  char* json = nullptr;
  if (tte_program_describe_json(program, &json, &error) == TTE_OK) {
    check(json != nullptr && json[0] == '{', "the description is a JSON object");
    tte_free_string(json);
  }
  tte_program_close(program);
  return 0;
}
