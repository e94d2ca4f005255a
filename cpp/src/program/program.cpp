#include "program/program.h"

#include <optional>

#include <executorch/runtime/backend/interface.h>

#include "backend/provider_registry.h"
#include "common/et_status.h"
#include "common/executorch_failure.h"
#include "common/text.h"
#include "cuda/caller_stream.h"
#include "program/etdump_writer.h"
#include "program/program_inputs.h"
#include "program/program_metadata.h"
#include "program/program_outputs.h"
#include "program/pte_checks.h"

namespace tte {

namespace et = executorch::runtime;

namespace {

// The status of a failed ExecuTorch call: the reason this library gave
// ExecuTorch when it was one of ours (`source` says whose), else
// ExecuTorch's own code.
Status failed_call(et::Error error, const std::string& what, const std::string& source = "") {
  const Status& reason = executorch_failure();
  if (!reason.ok()) {
    return Status(reason.code(),
                  what + ": " + et_error_text(error) + "; " + source + reason.message());
  }
  return Status(status_code_of(error), what + ": " + et_error_text(error));
}

Status read_meta(ProgramModule& module, const std::string& method,
                 std::optional<et::MethodMeta>* out) {
  auto meta = module.method_meta(method);
  if (!meta.ok()) {
    return Status(status_code_of(meta.error()),
                  "cannot read method '" + method + "': " + et_error_text(meta.error()));
  }
  out->emplace(*meta);
  return Status::Ok();
}

}  // namespace

Status Program::open_file(const std::string& path, ProgramOptions options,
                          std::unique_ptr<Program>* out) {
  return open(ProgramSource::file(path), std::move(options), out);
}

Status Program::open_buffer(const void* data, size_t size, ProgramOptions options,
                            std::unique_ptr<Program>* out) {
  return open(ProgramSource::buffer(data, size), std::move(options), out);
}

Status Program::open(const ProgramSource& source, ProgramOptions options,
                     std::unique_ptr<Program>* out) {
  std::unique_ptr<Program> program(new Program());
  program->options_ = std::move(options);
  Status status = open_program(source, program->options_, &program->opened_);
  if (status.ok()) {
    *out = std::move(program);
  }
  return status;
}

Program::~Program() {
  std::lock_guard<std::mutex> lock(mutex_);
  // The methods point into the buffers kept in methods_ and opened_: drop
  // the module first.
  opened_.module.reset();
  methods_.clear();
}

Status Program::check_method(const std::string& method) const {
  for (const std::string& name : opened_.method_names) {
    if (name == method) {
      return Status::Ok();
    }
  }
  const std::string known = join_quoted(opened_.method_names);
  return Status(TTE_ERROR_NOT_FOUND, "the program has no method '" + method + "' (it has " +
                                         (known.empty() ? "none" : known) + ")");
}

MethodState& Program::state_of(const std::string& method) {
  std::unique_ptr<MethodState>& slot = methods_[method];
  if (!slot) {
    slot = std::make_unique<MethodState>();
  }
  return *slot;
}

Status Program::ensure_loaded(const std::string& method, MethodState** state) {
  Status status = check_method(method);
  if (!status.ok()) {
    return status;
  }
  MethodState& slot = state_of(method);
  *state = &slot;
  ProgramModule& module = *opened_.module;
  if (module.loaded_method(method) != nullptr) {
    return Status::Ok();
  }
  std::optional<et::MethodMeta> meta;
  status = read_meta(module, method, &meta);
  if (status.ok()) {
    status = check_method_before_load(*meta, method);
  }
  if (!status.ok()) {
    return status;
  }

  DelegateRecorder recorder;
  et::Error error;
  clear_executorch_failure();
  {
    DelegateRecorder::Scope scope(&recorder);
    error = module.load_method(method);
  }
  slot.records = recorder.records();
  if (error != et::Error::Ok) {
    bool delegate_failed = false;
    for (const DelegateRecord& record : slot.records) {
      delegate_failed = delegate_failed || !record.error.empty();
    }
    status = failed_call(error, "cannot load method '" + method + "'",
                         delegate_failed ? "TensorRTBackend delegate: " : "");
    std::string message = status.message();
    if (meta->uses_backend(TTE_BACKEND_NAME)) {
      if (et::get_backend_class(TTE_BACKEND_NAME) == nullptr) {
        message += "; backend " TTE_BACKEND_NAME " is not registered";
      } else if (ProviderRegistry::instance().size() == 0) {
        message +=
            "; no engine provider is registered (load one with "
            "tte_load_engine_provider_library)";
      }
    }
    return Status(status.code(), message);
  }
  et::Method* loaded = module.loaded_method(method);
  slot.input_staging.clear();
  slot.input_staging.resize(loaded->inputs_size());
  plan_output_buffers(*loaded, slot);
  return Status::Ok();
}

Status Program::load_method(const std::string& method) {
  std::lock_guard<std::mutex> lock(mutex_);
  MethodState* state = nullptr;
  return ensure_loaded(method, &state);
}

Status Program::io_count(const std::string& method, size_t* num_inputs, size_t* num_outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status status = check_method(method);
  std::optional<et::MethodMeta> meta;
  if (status.ok()) {
    status = read_meta(*opened_.module, method, &meta);
  }
  if (status.ok()) {
    *num_inputs = meta->num_inputs();
    *num_outputs = meta->num_outputs();
  }
  return status;
}

Status Program::value_info(const std::string& method, size_t index, bool is_input,
                           TteValueInfo* info) {
  std::lock_guard<std::mutex> lock(mutex_);
  Status status = check_method(method);
  std::optional<et::MethodMeta> meta;
  if (status.ok()) {
    status = read_meta(*opened_.module, method, &meta);
  }
  if (!status.ok()) {
    return status;
  }
  // Devices are known only once the method is loaded; try that once here and
  // report -1 if it fails (run reports why).
  MethodState& slot = state_of(method);
  if (opened_.module->loaded_method(method) == nullptr && !slot.info_load_tried) {
    slot.info_load_tried = true;
    MethodState* state = nullptr;
    ensure_loaded(method, &state);
  }
  return fill_value_info(*meta, opened_.module->loaded_method(method), is_input, index, info);
}

Status Program::input_info(const std::string& method, size_t index, TteValueInfo* info) {
  return value_info(method, index, true, info);
}

Status Program::output_info(const std::string& method, size_t index, TteValueInfo* info) {
  return value_info(method, index, false, info);
}

Status Program::describe_json(std::string* json) {
  std::lock_guard<std::mutex> lock(mutex_);
  return describe_program_json(*opened_.module, opened_.method_names, methods_,
                               options_.enable_etdump, json);
}

Status Program::run(const std::string& method, const TteInput* inputs, size_t num_inputs,
                    bool copy_outputs, TteOutput* outputs, size_t num_outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (outputs == nullptr && num_outputs > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "outputs is NULL");
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    outputs[i] = TteOutput{};
  }
  if (inputs == nullptr && num_inputs > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  }
  MethodState* state = nullptr;
  Status status = ensure_loaded(method, &state);
  if (!status.ok()) {
    return status;
  }
  et::Method& loaded = *opened_.module->loaded_method(method);
  const et::MethodMeta meta = loaded.method_meta();
  if (num_inputs != meta.num_inputs()) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "method '" + method + "' takes " +
                                                  std::to_string(meta.num_inputs()) +
                                                  " inputs, got " + std::to_string(num_inputs));
  }
  if (num_outputs != meta.num_outputs()) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  "method '" + method + "' returns " + std::to_string(meta.num_outputs()) +
                      " outputs, but room for " + std::to_string(num_outputs) + " was given");
  }
  void* stream = nullptr;
  caller_stream(&stream);
  status = set_method_inputs(loaded, *state, inputs, num_inputs, stream);
  if (status.ok()) {
    status = give_output_buffers(loaded, *state);
  }
  if (!status.ok()) {
    return status;
  }
  clear_executorch_failure();
  const et::Error error = loaded.execute();
  if (error != et::Error::Ok) {
    status = failed_call(error, "executing method '" + method + "' failed");
    if (executorch_failure().ok()) {
      // ExecuTorch's own checks only log.
      return Status(status.code(), status.message() + " (the log says which step)");
    }
    return status;
  }
  return collect_method_outputs(loaded, copy_outputs, stream, outputs, num_outputs);
}

Status Program::write_etdump(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  return write_etdump_file(opened_.module->event_tracer(), path);
}

}  // namespace tte
