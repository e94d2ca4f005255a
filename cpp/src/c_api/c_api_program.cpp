// The "Programs" group of c_api.h: thin C over tte::Program. Every call fills
// the optional TteError and keeps a failure's message as the handle's last
// error.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "program/program.h"
#include "torch_tensorrt_executorch/c_api.h"

struct TteProgram {
  std::shared_ptr<tte::Program> program;
  std::mutex error_mutex;
  std::string last_error;
};

// A method handle shares the program, so a run through it never meets a
// freed one; the state belongs to the program.
struct TteMethod {
  std::shared_ptr<tte::Program> program;
  tte::MethodState* state;
};

namespace {

TteStatus report(const tte::Status& status, TteError* error) {
  return tte::to_c_status(status, error);
}

TteStatus finish(TteProgram* handle, const tte::Status& status, TteError* error) {
  if (handle != nullptr && !status.ok()) {
    std::lock_guard<std::mutex> lock(handle->error_mutex);
    handle->last_error = status.message();
  }
  return report(status, error);
}

tte::Status invalid(const char* message) {
  return tte::Status(TTE_ERROR_INVALID_ARGUMENT, message);
}

// Runs `body`, turning a C++ exception (allocation failure, mostly) into a
// status so none crosses the C boundary.
template <typename Body>
tte::Status guarded(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return tte::Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return tte::Status(TTE_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  }
}

// Reads the fields of `options` its struct_size covers.
tte::Status read_options(const TteProgramOptions* options, tte::ProgramOptions* out) {
  if (options == nullptr) {
    return tte::Status::Ok();
  }
  const uint32_t size = options->struct_size;
  auto has = [size](size_t end) { return size >= end; };
  if (size < offsetof(TteProgramOptions, data_paths)) {
    return invalid("TteProgramOptions.struct_size is too small; set it to sizeof(TteProgramOptions)");
  }
  if (has(offsetof(TteProgramOptions, num_data_paths) + sizeof(size_t)) &&
      options->num_data_paths > 0) {
    if (options->data_paths == nullptr) {
      return invalid("TteProgramOptions.data_paths is NULL but num_data_paths > 0");
    }
    for (size_t i = 0; i < options->num_data_paths; ++i) {
      if (options->data_paths[i] == nullptr) {
        return invalid("TteProgramOptions.data_paths holds a NULL path");
      }
      out->data_paths.emplace_back(options->data_paths[i]);
    }
  }
  if (has(offsetof(TteProgramOptions, num_data_buffers) + sizeof(size_t)) &&
      options->num_data_buffers > 0) {
    if (options->data_buffers == nullptr) {
      return invalid("TteProgramOptions.data_buffers is NULL but num_data_buffers > 0");
    }
    for (size_t i = 0; i < options->num_data_buffers; ++i) {
      const TteBuffer& buffer = options->data_buffers[i];
      if (buffer.data == nullptr && buffer.size > 0) {
        return invalid("TteProgramOptions.data_buffers holds a NULL buffer");
      }
      const auto* bytes = static_cast<const uint8_t*>(buffer.data);
      out->data_buffers.emplace_back(bytes, bytes + buffer.size);
    }
  }
  if (has(offsetof(TteProgramOptions, num_backend_options) + sizeof(size_t)) &&
      options->num_backend_options > 0) {
    if (options->backend_options == nullptr) {
      return invalid("TteProgramOptions.backend_options is NULL but num_backend_options > 0");
    }
    for (size_t i = 0; i < options->num_backend_options; ++i) {
      const TteBackendOption& option = options->backend_options[i];
      if (option.backend == nullptr || option.key == nullptr) {
        return invalid("a TteBackendOption has a NULL backend or key");
      }
      if (option.type == TTE_OPTION_STRING && option.string_value == nullptr) {
        return invalid("a string TteBackendOption has a NULL string_value");
      }
      tte::BackendOptionValue value;
      value.backend = option.backend;
      value.key = option.key;
      value.type = option.type;
      value.int_value = option.int_value;
      if (option.type == TTE_OPTION_STRING) {
        value.string_value = option.string_value;
      }
      out->backend_options.push_back(std::move(value));
    }
  }
  if (has(offsetof(TteProgramOptions, enable_etdump) + sizeof(int32_t))) {
    out->enable_etdump = options->enable_etdump != 0;
  }
  if (has(offsetof(TteProgramOptions, max_planned_memory) + sizeof(uint64_t))) {
    out->max_planned_memory = options->max_planned_memory;
  }
  return tte::Status::Ok();
}

template <typename Open>
TteStatus open_program(const TteProgramOptions* options, TteProgram** out_program,
                       TteError* error, Open&& open) {
  if (out_program == nullptr) {
    return report(invalid("out_program is NULL"), error);
  }
  *out_program = nullptr;
  std::shared_ptr<tte::Program> program;
  const tte::Status status = guarded([&] {
    tte::ProgramOptions parsed;
    tte::Status read = read_options(options, &parsed);
    if (!read.ok()) {
      return read;
    }
    return open(std::move(parsed), &program);
  });
  if (!status.ok()) {
    return report(status, error);
  }
  auto* handle = new (std::nothrow) TteProgram();
  if (handle == nullptr) {
    return report(tte::Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory"), error);
  }
  handle->program = std::move(program);
  *out_program = handle;
  return report(status, error);
}

}  // namespace

extern "C" {

TTE_API TteStatus tte_program_open_file(const char* path, const TteProgramOptions* options,
                                        TteProgram** out_program, TteError* error) {
  if (path == nullptr) {
    return report(invalid("path is NULL"), error);
  }
  return open_program(options, out_program, error,
                      [&](tte::ProgramOptions parsed, std::shared_ptr<tte::Program>* program) {
                        return tte::Program::open_file(path, std::move(parsed), program);
                      });
}

TTE_API TteStatus tte_program_open_buffer(const void* data, size_t size,
                                          const TteProgramOptions* options,
                                          TteProgram** out_program, TteError* error) {
  if (data == nullptr) {
    return report(invalid("data is NULL"), error);
  }
  return open_program(options, out_program, error,
                      [&](tte::ProgramOptions parsed, std::shared_ptr<tte::Program>* program) {
                        return tte::Program::open_buffer(data, size, std::move(parsed), program);
                      });
}

TTE_API void tte_program_close(TteProgram* program) {
  if (program != nullptr) {
    program->program->close();
    delete program;
  }
}

TTE_API const char* tte_program_last_error(const TteProgram* program) {
  if (program == nullptr) {
    return "";
  }
  return program->last_error.c_str();
}

TTE_API TteStatus tte_program_num_methods(TteProgram* program, size_t* out_count,
                                          TteError* error) {
  if (program == nullptr || out_count == nullptr) {
    return finish(program, invalid("program and out_count must not be NULL"), error);
  }
  *out_count = program->program->method_names().size();
  return finish(program, tte::Status::Ok(), error);
}

TTE_API TteStatus tte_program_method_name(TteProgram* program, size_t index,
                                          const char** out_name, TteError* error) {
  if (program == nullptr || out_name == nullptr) {
    return finish(program, invalid("program and out_name must not be NULL"), error);
  }
  const auto& names = program->program->method_names();
  if (index >= names.size()) {
    return finish(program,
                  tte::Status(TTE_ERROR_INVALID_ARGUMENT,
                                           "method index " + std::to_string(index) +
                                               " is out of range: the program has " +
                                               std::to_string(names.size()) + " methods"),
                  error);
  }
  *out_name = names[index].c_str();
  return finish(program, tte::Status::Ok(), error);
}

TTE_API TteStatus tte_program_load_method(TteProgram* program, const char* method,
                                          TteError* error) {
  if (program == nullptr || method == nullptr) {
    return finish(program, invalid("program and method must not be NULL"), error);
  }
  return finish(program, guarded([&] { return program->program->load_method(method); }), error);
}

TTE_API TteStatus tte_program_method_io_count(TteProgram* program, const char* method,
                                              size_t* out_num_inputs, size_t* out_num_outputs,
                                              TteError* error) {
  if (program == nullptr || method == nullptr || out_num_inputs == nullptr ||
      out_num_outputs == nullptr) {
    return finish(program, invalid("program, method and the counts must not be NULL"), error);
  }
  return finish(program, guarded([&] {
                  return program->program->io_count(method, out_num_inputs, out_num_outputs);
                }),
                error);
}

TTE_API TteStatus tte_program_input_info(TteProgram* program, const char* method, size_t index,
                                         TteValueInfo* out_info, TteError* error) {
  if (program == nullptr || method == nullptr || out_info == nullptr) {
    return finish(program, invalid("program, method and out_info must not be NULL"), error);
  }
  return finish(program,
                guarded([&] { return program->program->input_info(method, index, out_info); }),
                error);
}

TTE_API TteStatus tte_program_output_info(TteProgram* program, const char* method, size_t index,
                                          TteValueInfo* out_info, TteError* error) {
  if (program == nullptr || method == nullptr || out_info == nullptr) {
    return finish(program, invalid("program, method and out_info must not be NULL"), error);
  }
  return finish(program,
                guarded([&] { return program->program->output_info(method, index, out_info); }),
                error);
}

TTE_API TteStatus tte_program_describe_json(TteProgram* program, char** out_json,
                                            TteError* error) {
  if (program == nullptr || out_json == nullptr) {
    return finish(program, invalid("program and out_json must not be NULL"), error);
  }
  *out_json = nullptr;
  std::string json;
  const tte::Status status =
      guarded([&] { return program->program->describe_json(&json); });
  if (status.ok()) {
    // Freed with tte_free_string, which releases with free().
    auto* copy = static_cast<char*>(std::malloc(json.size() + 1));
    if (copy == nullptr) {
      return finish(program,
                    tte::Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory"),
                    error);
    }
    std::memcpy(copy, json.c_str(), json.size() + 1);
    *out_json = copy;
  }
  return finish(program, status, error);
}

TTE_API TteStatus tte_program_run(TteProgram* program, const char* method, const TteInput* inputs,
                                  size_t num_inputs, int32_t copy_outputs, TteOutput* outputs,
                                  size_t num_outputs, TteError* error) {
  if (program == nullptr || method == nullptr) {
    return finish(program, invalid("program and method must not be NULL"), error);
  }
  tte::RunOptions options;
  options.copy_outputs = copy_outputs != 0;
  return finish(program, guarded([&] {
                  return program->program->run(method, inputs, num_inputs, options, outputs,
                                               num_outputs);
                }),
                error);
}

TTE_API TteStatus tte_program_write_etdump(TteProgram* program, const char* path,
                                           TteError* error) {
  if (program == nullptr || path == nullptr) {
    return finish(program, invalid("program and path must not be NULL"), error);
  }
  return finish(program, guarded([&] { return program->program->write_etdump(path); }), error);
}

TTE_API TteStatus tte_program_get_method(TteProgram* program, const char* method,
                                         TteMethod** out_method, TteError* error) {
  if (program == nullptr || method == nullptr || out_method == nullptr) {
    return finish(program, invalid("program, method and out_method must not be NULL"), error);
  }
  *out_method = nullptr;
  tte::MethodState* state = nullptr;
  const tte::Status status =
      guarded([&] { return program->program->get_method(method, &state); });
  if (!status.ok()) {
    return finish(program, status, error);
  }
  auto* handle = new (std::nothrow) TteMethod{program->program, state};
  if (handle == nullptr) {
    return finish(program, tte::Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory"), error);
  }
  *out_method = handle;
  return finish(program, status, error);
}

TTE_API void tte_method_release(TteMethod* method) { delete method; }

TTE_API TteStatus tte_method_io_count(TteMethod* method, size_t* out_num_inputs,
                                      size_t* out_num_outputs, TteError* error) {
  if (method == nullptr || out_num_inputs == nullptr || out_num_outputs == nullptr) {
    return report(invalid("method and the counts must not be NULL"), error);
  }
  // Fixed once the method is loaded, which the handle guarantees.
  *out_num_inputs = method->state->method->inputs_size();
  *out_num_outputs = method->state->method->outputs_size();
  return report(tte::Status::Ok(), error);
}

TTE_API TteStatus tte_method_run(TteMethod* method, const TteInput* inputs, size_t num_inputs,
                                 const TteRunOptions* options, TteOutput* outputs,
                                 size_t num_outputs, TteError* error) {
  if (method == nullptr) {
    return report(invalid("method must not be NULL"), error);
  }
  tte::RunOptions run_options;
  if (options != nullptr) {
    const uint32_t size = options->struct_size;
    auto has = [size](size_t end) { return size >= end; };
    if (!has(offsetof(TteRunOptions, copy_outputs) + sizeof(int32_t))) {
      return report(invalid("TteRunOptions.struct_size is too small; set it to sizeof(TteRunOptions)"),
                    error);
    }
    run_options.copy_outputs = options->copy_outputs != 0;
    if (has(offsetof(TteRunOptions, stream) + sizeof(void*))) {
      run_options.has_stream = options->has_stream != 0;
      run_options.stream = options->stream;
    }
    if (has(offsetof(TteRunOptions, allocator_context) + sizeof(void*))) {
      run_options.allocate_output = options->allocate_output;
      run_options.allocator_context = options->allocator_context;
    }
  }
  return report(guarded([&] {
                  return method->program->run(*method->state, inputs, num_inputs, run_options,
                                              outputs, num_outputs);
                }),
                error);
}

}  // extern "C"
