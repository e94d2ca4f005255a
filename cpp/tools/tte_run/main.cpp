// tte-run: runs a method of a .pte through the plugin's C API and prints
// output shapes, dtypes, checksums and latency percentiles. The steps, in
// order: load provider libraries, open the program, pick the method, make
// the inputs, run it timed, bring the outputs to the host, save and report.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/tte_run/arguments.h"
#include "tools/tte_run/failure.h"
#include "tools/tte_run/inputs.h"
#include "tools/tte_run/outputs.h"
#include "tools/tte_run/report.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte::tools {
namespace {

// Why the plugin registered no native provider (its library is not beside
// the plugin, or did not load), for the message of a run without providers.
std::string native_provider_absence() {
  char* text = nullptr;
  TteError error{};
  if (tte_engine_provider_runtime("tensorrt-native", &text, &error) == TTE_OK) {
    tte_free_string(text);
    return "";
  }
  return error.message;
}

using ProgramHandle = std::unique_ptr<TteProgram, decltype(&tte_program_close)>;

std::optional<Failure> load_providers(const Arguments& args) {
  TteError error{};
  for (const std::string& library : args.providers) {
    if (tte_load_engine_provider_library(library.c_str(), TTE_PROVIDER_OTHER, &error) != TTE_OK) {
      Failure failure = api_failure(error);
      failure.message = "cannot load provider library '" + library + "': " + failure.message;
      return failure;
    }
  }
  return std::nullopt;
}

std::optional<Failure> open_program(const Arguments& args, ProgramHandle* out) {
  std::vector<OptionText> option_texts(args.options.size());
  std::vector<TteBackendOption> backend_options;
  for (size_t i = 0; i < args.options.size(); ++i) {
    if (auto usage = parse_option(args.options[i], &option_texts[i])) {
      return usage_failure(usage->message);
    }
    backend_options.push_back(option_texts[i].option);
  }
  std::vector<const char*> data_paths;
  for (const std::string& path : args.data_paths) {
    data_paths.push_back(path.c_str());
  }
  TteProgramOptions options{};
  options.struct_size = sizeof(options);
  options.data_paths = data_paths.data();
  options.num_data_paths = data_paths.size();
  options.backend_options = backend_options.data();
  options.num_backend_options = backend_options.size();
  TteProgram* program = nullptr;
  TteError error{};
  if (tte_program_open_file(args.model.c_str(), &options, &program, &error) != TTE_OK) {
    return api_failure(error);
  }
  out->reset(program);
  return std::nullopt;
}

// The method asked for, else "forward", else the first.
std::optional<Failure> choose_method(const Arguments& args, TteProgram* program,
                                     std::string* method) {
  *method = args.method;
  if (!method->empty()) {
    return std::nullopt;
  }
  size_t num_methods = 0;
  tte_program_num_methods(program, &num_methods, nullptr);
  for (size_t i = 0; i < num_methods; ++i) {
    const char* name = nullptr;
    tte_program_method_name(program, i, &name, nullptr);
    if (i == 0 || std::strcmp(name, "forward") == 0) {
      *method = name;
    }
    if (*method == "forward") {
      break;
    }
  }
  if (method->empty()) {
    return Failure{kExitFailure, "'" + args.model + "' has no methods"};
  }
  return std::nullopt;
}

// A program with TensorRT delegates cannot load without a provider; say so
// before ExecuTorch reports a bare init failure.
std::optional<Failure> check_provider_present(TteProgram* program, const std::string& method) {
  char* description = nullptr;
  TteError error{};
  if (tte_program_describe_json(program, &description, &error) != TTE_OK) {
    return api_failure(error);
  }
  const nlohmann::json described = nlohmann::json::parse(description, nullptr, false);
  tte_free_string(description);
  bool uses_tensorrt = false;
  if (described.is_object()) {
    for (const auto& entry : described["methods"]) {
      if (entry.value("name", "") == method) {
        for (const auto& backend : entry["backends"]) {
          uses_tensorrt = uses_tensorrt || backend == TTE_BACKEND_NAME;
        }
      }
    }
  }
  if (uses_tensorrt && tte_num_engine_providers() == 0) {
    return Failure{kExitFailure, "no engine provider is registered (" + native_provider_absence() +
                                     "); pass --provider LIB"};
  }
  return std::nullopt;
}

// One line per provider, in selection order: its name and the runtime it
// found (or why none).
void list_providers() {
  for (size_t i = 0; i < tte_num_engine_providers(); ++i) {
    const char* name = tte_engine_provider_name(i);
    char* text = nullptr;
    TteError error{};
    std::string runtime;
    if (tte_engine_provider_runtime(name, &text, &error) == TTE_OK) {
      runtime = text;
      tte_free_string(text);
    } else {
      runtime = error.message;
    }
    std::printf("%s%s%s\n", name, runtime.empty() ? "" : ": ", runtime.c_str());
  }
  if (tte_num_engine_providers() == 0) {
    std::printf("no engine provider is registered (%s)\n", native_provider_absence().c_str());
  }
}

std::optional<Failure> make_inputs(const Arguments& args, TteProgram* program,
                                   const std::string& method, std::vector<InputValue>* values,
                                   size_t* num_outputs) {
  TteError error{};
  if (tte_program_load_method(program, method.c_str(), &error) != TTE_OK) {
    return api_failure(error);
  }
  size_t num_inputs = 0;
  if (tte_program_method_io_count(program, method.c_str(), &num_inputs, num_outputs, &error) !=
      TTE_OK) {
    return api_failure(error);
  }
  if (!args.inputs.empty() && args.inputs.size() != num_inputs) {
    return usage_failure("method '" + method + "' takes " + std::to_string(num_inputs) +
                         " inputs, got " + std::to_string(args.inputs.size()) + " --input");
  }
  *values = std::vector<InputValue>(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    TteValueInfo info{};
    if (tte_program_input_info(program, method.c_str(), i, &info, &error) != TTE_OK) {
      return api_failure(error);
    }
    const std::string* source = args.inputs.empty() ? nullptr : &args.inputs[i];
    if (auto message = make_input(info, i, source, &(*values)[i])) {
      return Failure{kExitFailure, *message};
    }
  }
  return std::nullopt;
}

// Warmup runs, then timed runs; the last run's outputs are left in `outputs`.
std::optional<Failure> run_timed(const Arguments& args, TteProgram* program,
                                 const std::string& method, const std::vector<InputValue>& values,
                                 std::vector<TteOutput>* outputs,
                                 std::vector<double>* latencies_ms) {
  std::vector<TteInput> inputs;
  for (const InputValue& value : values) {
    inputs.push_back(value.input);
  }
  TteError error{};
  for (int run = 0; run < args.warmup + args.num_runs; ++run) {
    release_outputs(*outputs);
    const auto start = std::chrono::steady_clock::now();
    const TteStatus status = tte_program_run(program, method.c_str(), inputs.data(), inputs.size(),
                                             0, outputs->data(), outputs->size(), &error);
    const auto end = std::chrono::steady_clock::now();
    if (status != TTE_OK) {
      return api_failure(error);
    }
    if (run >= args.warmup) {
      latencies_ms->push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
  }
  return std::nullopt;
}

std::optional<Failure> run(const Arguments& args) {
  if (auto failure = load_providers(args)) {
    return failure;
  }
  if (args.list_providers) {
    list_providers();
    return std::nullopt;
  }
  ProgramHandle program(nullptr, &tte_program_close);
  if (auto failure = open_program(args, &program)) {
    return failure;
  }
  std::string method;
  if (auto failure = choose_method(args, program.get(), &method)) {
    return failure;
  }
  if (auto failure = check_provider_present(program.get(), method)) {
    return failure;
  }
  std::vector<InputValue> inputs;
  size_t num_outputs = 0;
  if (auto failure = make_inputs(args, program.get(), method, &inputs, &num_outputs)) {
    return failure;
  }
  std::vector<TteOutput> outputs(num_outputs);
  std::vector<double> latencies_ms;
  auto failure = run_timed(args, program.get(), method, inputs, &outputs, &latencies_ms);
  std::vector<HostOutput> host(num_outputs);
  for (size_t i = 0; !failure && i < num_outputs; ++i) {
    if (auto message = to_host(outputs[i], i, &host[i])) {
      failure = Failure{kExitFailure, *message};
    }
  }
  release_outputs(outputs);
  if (failure) {
    return failure;
  }
  if (!args.save_dir.empty()) {
    if (auto message = save_outputs(args.save_dir, args.model, method, inputs, host)) {
      return Failure{kExitFailure, *message};
    }
  }
  print_report(args, method, inputs, host, summarize(latencies_ms));
  return std::nullopt;
}

}  // namespace
}  // namespace tte::tools

int main(int argc, char** argv) {
  using namespace tte::tools;
  Arguments args;
  std::optional<Failure> failure;
  if (auto usage = parse_arguments(argc, argv, &args)) {
    failure = usage_failure(usage->message);
  } else {
    failure = run(args);
  }
  if (!failure) {
    return kExitOk;
  }
  print_failure(args, *failure);
  return failure->exit_code;
}
