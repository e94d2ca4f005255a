#include "program/program.h"

#include <optional>

#include <executorch/runtime/backend/interface.h>

#include "backend/load_options.h"
#include "backend/tensorrt_backend.h"
#include "common/call_context.h"
#include "common/et_status.h"
#include "common/logging.h"
#include "common/runtime_stats.h"
#include "common/text.h"
#include "program/etdump_writer.h"
#include "program/executorch_step.h"
#include "program/method_load_checks.h"
#include "program/program_inputs.h"
#include "program/program_metadata.h"
#include "program/program_outputs.h"

namespace tte {

namespace et = executorch::runtime;

namespace {

Status read_meta(CallContext& call, ProgramModule& module, const std::string& method,
                 std::optional<et::MethodMeta>* out) {
  ExecuTorchStep step(call, ProgramStep::kMethodMeta);
  auto meta = module.method_meta(method);
  if (!meta.ok()) {
    return step.failed(meta.error(), "cannot read method '" + method + "'");
  }
  out->emplace(*meta);
  return Status::Ok();
}

// Whether runs of a loaded method may repeat the last one
// (program/repeated_run.h): its one instruction calls the one
// TensorRTBackend delegate it has (a run checks that the delegate ran), and
// it takes every input where the caller keeps it.
bool runs_may_repeat(const et::MethodMeta& meta, const MethodState& state) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // ExecuTorch marks it experimental (ET_EXPERIMENTAL, a deprecation).
  const size_t instructions = meta.num_instructions();
#pragma GCC diagnostic pop
  if (instructions != 1 || meta.num_backends() != 1 || !meta.uses_backend(TTE_BACKEND_NAME)) {
    return false;
  }
  for (size_t i = 0; i < state.input_tags.size(); ++i) {
    if (state.input_tags[i] != et::Tag::Tensor || state.input_specs[i].memory_planned) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status Program::open_file(const std::string& path, ProgramOptions options,
                          std::shared_ptr<Program>* out) {
  return open(ProgramSource::file(path), std::move(options), out);
}

Status Program::open_buffer(const void* data, size_t size, ProgramOptions options,
                            std::shared_ptr<Program>* out) {
  return open(ProgramSource::buffer(data, size), std::move(options), out);
}

Status Program::open(const ProgramSource& source, ProgramOptions options,
                     std::shared_ptr<Program>* out) {
  std::shared_ptr<Program> program(new Program());
  // One pass over the options, read as TensorRTBackend reads its own (only
  // its backend id; the last value given wins): max_concurrent_runs is the
  // program's, not the backend's, so it is taken out here. Other backends'
  // options pass through as given.
  std::vector<BackendOptionValue> backend_options;
  const BackendOptionValue* max_concurrent_runs = nullptr;
  for (BackendOptionValue& option : options.backend_options) {
    if (option.backend != TTE_BACKEND_NAME) {
      backend_options.push_back(std::move(option));
    } else if (option.key == kMaxConcurrentRunsOption) {
      max_concurrent_runs = &option;
    } else {
      backend_options.push_back(std::move(option));
    }
  }
  if (max_concurrent_runs != nullptr) {
    if (max_concurrent_runs->type != TTE_OPTION_INT || max_concurrent_runs->int_value < 1 ||
        max_concurrent_runs->int_value > kMaxMaxConcurrentRuns) {
      return Status(TTE_ERROR_INVALID_ARGUMENT,
                    std::string("option '") + kMaxConcurrentRunsOption + "' must be " +
                        find_load_option(kMaxConcurrentRunsOption)->must_be);
    }
    program->max_concurrent_runs_ = static_cast<int>(max_concurrent_runs->int_value);
  }
  options.backend_options = std::move(backend_options);
  program->options_ = std::move(options);
  CallContext call;
  Status status = open_program(call, source, program->options_, &program->opened_);
  if (status.ok()) {
    status = program->backend_options_map_.build(program->options_.backend_options);
  }
  if (status.ok()) {
    // One event tracer and one .ptd loader per module: such programs keep
    // one instance per method.
    if (program->options_.enable_etdump || program->opened_.has_data_files) {
      program->max_concurrent_runs_ = 1;
    }
    *out = std::move(program);
  }
  return status;
}

Program::~Program() {
  std::lock_guard<std::mutex> lock(mutex_);
  // The methods point into the buffers kept in methods_ and opened_: drop
  // the modules first, the extra instances' (over the same program) before
  // the primary one.
  for (auto& entry : methods_) {
    entry.second->extras.clear();
  }
  opened_.module.reset();
  methods_.clear();
}

void Program::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
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

Status Program::ensure_loaded(CallContext& call, const std::string& method, MethodState** state) {
  Status status = check_method(method);
  if (!status.ok()) {
    return status;
  }
  MethodState& slot = state_of(method);
  *state = &slot;
  if (slot.method != nullptr) {
    return Status::Ok();
  }
  if (!slot.load_failure.ok()) {
    // Loading again would repeat its work (planned memory is allocated and
    // zero-filled before delegates initialize) only to fail the same way.
    return slot.load_failure;
  }
  slot.load_failure = load_method_once(call, method, slot);
  return slot.load_failure;
}

Status Program::load_method_once(CallContext& call, const std::string& method, MethodState& slot) {
  ProgramModule& module = *opened_.module;
  std::optional<et::MethodMeta> meta;
  Status status = read_meta(call, module, method, &meta);
  if (status.ok()) {
    status = check_method_before_load(*meta, method, options_.max_planned_memory);
  }
  if (status.ok()) {
    // The method's payloads and constants are read from the files now.
    status = opened_.files_unchanged().prefixed("cannot load method '" + method + "': ");
  }
  const auto external = opened_.external_key.find(method);
  if (status.ok() && external != opened_.external_key.end() && !opened_.has_data_files) {
    // ExecuTorch would fail with a bare InvalidState ("external_data_map is null").
    return Status(TTE_ERROR_NOT_FOUND,
                  "cannot load method '" + method + "': it reads constants from a .ptd ('" +
                      printable(external->second) +
                      "', ...), and the program was opened without one: pass the .ptd written "
                      "when the program was exported (Python finds it beside the .pte)");
  }
  if (!status.ok()) {
    return status;
  }

  // Arenas of our own when they are better page-locked; they must outlive
  // the method, so they live in its state.
  slot.arenas = PlannedHostArenas::make(*meta);
  // The delegates' init records what they looked like into the method's
  // state, for this load only.
  slot.records.clear();
  call.delegate_records = &slot.records;
  ExecuTorchStep step(call, ProgramStep::kLoadMethod);
  const et::Error error =
      module.load_method(method, slot.arenas ? slot.arenas->allocator() : nullptr);
  call.delegate_records = nullptr;
  if (error != et::Error::Ok) {
    slot.arenas.reset();
    bool delegate_failed = false;
    for (const DelegateRecord& record : slot.records) {
      delegate_failed = delegate_failed || !record.error.empty();
    }
    status =
        step.failed(error, "cannot load method '" + method + "'",
                    delegate_failed ? "TensorRTBackend delegate: " : "", opened_.has_data_files);
    std::string message = status.message();
    if (meta->uses_backend(TTE_BACKEND_NAME)) {
      const std::string unavailable = backend_unavailable_reason();
      if (!unavailable.empty()) {
        message += "; " + unavailable;
      }
    }
    return Status(status.code(), message);
  }
  status = opened_.files_unchanged();
  if (!status.ok()) {
    // Read while the file changed: what it got may be from either version.
    module.unload_method(method);
    return status.prefixed("cannot load method '" + method + "': ");
  }
  et::Method* loaded = module.loaded_method(method);
  slot.name = method;
  plan_method_inputs(*loaded, slot);
  plan_output_buffers(*loaded, slot);
  slot.repeatable = runs_may_repeat(*meta, slot);
  slot.method = loaded;
  return Status::Ok();
}

Status Program::load_method(const std::string& method) {
  MethodState* state = nullptr;
  return get_method(method, &state);
}

Status Program::get_method(const std::string& method, MethodState** state) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) {
    return Status(TTE_ERROR_INVALID_STATE, "the program is closed");
  }
  CallContext call;
  return ensure_loaded(call, method, state);
}

Status Program::io_count(const std::string& method, size_t* num_inputs, size_t* num_outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  CallContext call;
  Status status = check_method(method);
  std::optional<et::MethodMeta> meta;
  if (status.ok()) {
    status = read_meta(call, *opened_.module, method, &meta);
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
  CallContext call;
  Status status = check_method(method);
  std::optional<et::MethodMeta> meta;
  if (status.ok()) {
    status = read_meta(call, *opened_.module, method, &meta);
  }
  if (!status.ok()) {
    return status;
  }
  // Devices are known only once the method is loaded; try that here (once:
  // a failed load is remembered) and report -1 if it fails (run says why).
  MethodState* state = nullptr;
  ensure_loaded(call, method, &state);
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

namespace {

// Every output slot empty before a run, so a failed run leaves nothing the
// caller could mistake for a result.
Status clear_outputs(TteOutput* outputs, size_t num_outputs) {
  if (outputs == nullptr && num_outputs > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "outputs is NULL");
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    outputs[i] = TteOutput{};
  }
  return Status::Ok();
}

}  // namespace

Status Program::run(const std::string& method, const TteInput* inputs, size_t num_inputs,
                    const RunOptions& options, TteOutput* outputs, size_t num_outputs) {
  Status status = clear_outputs(outputs, num_outputs);
  if (!status.ok()) {
    return status;
  }
  CallContext call;
  if (options.has_stream) {
    call.use_stream(options.stream);
  }
  MethodState* state = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    status = closed_ ? Status(TTE_ERROR_INVALID_STATE, "the program is closed")
                     : ensure_loaded(call, method, &state);
  }
  if (!status.ok()) {
    return status;
  }
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  return run_instance(call, *state, lock, inputs, num_inputs, options, outputs, num_outputs);
}

Status Program::run(MethodState& method, const TteInput* inputs, size_t num_inputs,
                    const RunOptions& options, TteOutput* outputs, size_t num_outputs) {
  Status status = clear_outputs(outputs, num_outputs);
  if (!status.ok()) {
    return status;
  }
  if (closed_) {
    return Status(TTE_ERROR_INVALID_STATE,
                  "the program is closed (method '" + method.name + "' cannot run)");
  }
  CallContext call;
  if (options.has_stream) {
    call.use_stream(options.stream);
  }
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  return run_instance(call, method, lock, inputs, num_inputs, options, outputs, num_outputs);
}

Status Program::run_instance(CallContext& call, MethodState& primary,
                             std::unique_lock<std::mutex>& lock, const TteInput* inputs,
                             size_t num_inputs, const RunOptions& options, TteOutput* outputs,
                             size_t num_outputs) {
  // The single-thread path: one uncontended try_lock, as the lock before.
  if (max_concurrent_runs_ <= 1 || lock.try_lock()) {
    if (!lock.owns_lock()) {
      lock.lock();
    }
    if (closed_) {
      return Status(TTE_ERROR_INVALID_STATE,
                    "the program is closed (method '" + primary.name + "' cannot run)");
    }
    return run_locked(call, primary, inputs, num_inputs, options, outputs, num_outputs);
  }
  // Another thread runs the method (or another call holds the program):
  // an instance of our own, if one is idle or can be made.
  MethodInstance* extra = borrow_extra(call, primary);
  if (extra == nullptr) {
    lock.lock();
    if (closed_) {
      return Status(TTE_ERROR_INVALID_STATE,
                    "the program is closed (method '" + primary.name + "' cannot run)");
    }
    return run_locked(call, primary, inputs, num_inputs, options, outputs, num_outputs);
  }
  const Status status =
      run_locked(call, extra->state, inputs, num_inputs, options, outputs, num_outputs);
  std::lock_guard<std::mutex> pool_lock(primary.pool_mutex);
  extra->busy = false;
  return status;
}

MethodInstance* Program::borrow_extra(CallContext& call, MethodState& primary) {
  std::lock_guard<std::mutex> pool_lock(primary.pool_mutex);
  for (const auto& extra : primary.extras) {
    if (!extra->busy) {
      extra->busy = true;
      return extra.get();
    }
  }
  if (static_cast<int>(primary.extras.size()) + 1 >= max_concurrent_runs_) {
    return nullptr;
  }
  // Made under the pool's lock: other threads wanting one wait for it, or
  // for the primary. The engines are shared (share_engines), so a new
  // instance costs its planned memory and execution contexts.
  std::unique_ptr<MethodInstance> made;
  const Status status = load_extra(call, primary, &made);
  if (!status.ok()) {
    TTE_LOG(WARNING, "method '%s': no instance for a concurrent run (%s); waiting for the first",
            primary.name.c_str(), status.message().c_str());
    return nullptr;
  }
  made->busy = true;
  primary.extras.push_back(std::move(made));
  return primary.extras.back().get();
}

Status Program::load_extra(CallContext& call, const MethodState& primary,
                           std::unique_ptr<MethodInstance>* out) {
  auto instance = std::make_unique<MethodInstance>();
  instance->module = std::make_unique<ProgramModule>(opened_.module->program());
  ProgramModule& module = *instance->module;
  MethodState& slot = instance->state;
  std::optional<et::MethodMeta> meta;
  Status status = read_meta(call, module, primary.name, &meta);
  if (!status.ok()) {
    return status;
  }
  slot.arenas = PlannedHostArenas::make(*meta);
  ExecuTorchStep step(call, ProgramStep::kLoadMethod);
  const et::Error error =
      module.load_method(primary.name, slot.arenas ? slot.arenas->allocator() : nullptr, nullptr,
                         &backend_options_map_.map());
  if (error != et::Error::Ok) {
    return step.failed(error, "cannot load another instance of method '" + primary.name + "'");
  }
  et::Method* loaded = module.loaded_method(primary.name);
  slot.name = primary.name;
  plan_method_inputs(*loaded, slot);
  plan_output_buffers(*loaded, slot);
  slot.repeatable = runs_may_repeat(*meta, slot);
  slot.method = loaded;
  *out = std::move(instance);
  return Status::Ok();
}

Status Program::run_locked(CallContext& call, MethodState& state, const TteInput* inputs,
                           size_t num_inputs, const RunOptions& options, TteOutput* outputs,
                           size_t num_outputs) {
  if (inputs == nullptr && num_inputs > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  }
  et::Method& loaded = *state.method;
  // The counts plan_method_inputs and plan_output_buffers read from the method.
  if (num_inputs != state.input_values.size()) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "method '" + state.name + "' takes " +
                                                  std::to_string(state.input_values.size()) +
                                                  " inputs, got " + std::to_string(num_inputs));
  }
  if (num_outputs != state.output_values.size()) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "method '" + state.name + "' returns " +
                                                  std::to_string(state.output_values.size()) +
                                                  " outputs, but room for " +
                                                  std::to_string(num_outputs) + " was given");
  }
  OutputOptions output_options;
  output_options.copy = options.copy_outputs;
  output_options.stream = call.stream();
  output_options.allocate = options.allocate_output;
  output_options.allocator_context = options.allocator_context;
  output_options.max_planned_memory = options_.max_planned_memory;
  if (!options.copy_outputs) {
    output_options.keep_alive = shared_from_this();
  }
  // Views of the method's memory, nothing traced: the run may repeat the
  // last one, or be repeated by the next (program/repeated_run.h).
  const bool may_repeat = state.repeatable && !options.copy_outputs && !options_.enable_etdump;
  if (state.repeated.offered()) {
    if (may_repeat && state.repeated.matches(inputs, num_inputs, call)) {
      bool repeated = false;
      const Status status =
          state.repeated.offer().call->repeat(state.repeated.offer().ticket, &repeated);
      if (!status.ok()) {
        state.repeated.clear();
        return status.prefixed("executing method '" + state.name + "' failed: ");
      }
      if (repeated) {
        RuntimeStats::instance().run_repeats.fetch_add(1, std::memory_order_relaxed);
        return collect_method_outputs(state, output_options, outputs, num_outputs);
      }
    }
    state.repeated.clear();
  }
  Status status = set_method_inputs(call, loaded, state, inputs, num_inputs);
  if (status.ok()) {
    // Owned outputs the caller allocates are, where their shape allows,
    // written by the method itself: no copy of them afterwards.
    status = give_output_buffers(call, loaded, state, output_options);
  }
  if (!status.ok()) {
    return status;
  }
  ExecuTorchStep step(call, ProgramStep::kExecute);
  const et::Error error = loaded.execute();
  if (error != et::Error::Ok) {
    release_caller_outputs(state);
    return step.failed(error, "executing method '" + state.name + "' failed");
  }
  if (may_repeat && call.delegate_executions == 1 && call.repeat_offer.call != nullptr) {
    state.repeated.record(call.repeat_offer, inputs, num_inputs, call);
  }
  return collect_method_outputs(state, output_options, outputs, num_outputs);
}

Status Program::write_etdump(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  return write_etdump_file(opened_.module->event_tracer(), path);
}

}  // namespace tte
