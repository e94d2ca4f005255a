// The "Programs" and "Method handles" groups of c_api.h: thin C over
// tte::Program, each call at the C boundary (c_boundary.h). Every call fills
// the optional TteError, and a program call keeps a failure's message as the
// handle's last error.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "c_api/c_boundary.h"
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

// A failed call's message is also the handle's last error.
TteStatus finish(TteProgram* handle, const tte::Status& status, TteError* error) noexcept {
  if (handle != nullptr && !status.ok()) {
    try {
      std::lock_guard<std::mutex> lock(handle->error_mutex);
      handle->last_error = status.message();
    } catch (...) {
      // No memory for the copy: the TteError still carries the message.
    }
  }
  return tte::to_c_status(status, error);
}

// A program call at the C boundary (c_boundary.h): `body` returns a Status;
// an exception becomes the failure of `function`.
template <typename Body>
TteStatus program_call(const char* function, TteProgram* handle, TteError* error,
                       Body&& body) noexcept {
  return finish(handle, tte::c_boundary::guarded(function, std::forward<Body>(body)), error);
}

tte::Status invalid(const char* message) {
  return tte::Status(TTE_ERROR_INVALID_ARGUMENT, message);
}

// Reads the fields of `options` its struct_size covers.
tte::Status read_options(const TteProgramOptions* options, tte::ProgramOptions* out) {
  if (options == nullptr) {
    return tte::Status::Ok();
  }
  const uint32_t size = options->struct_size;
  auto has = [size](size_t end) { return size >= end; };
  if (size < offsetof(TteProgramOptions, data_paths)) {
    return invalid(
        "TteProgramOptions.struct_size is too small; set it to sizeof(TteProgramOptions)");
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
tte::Status open_program(const TteProgramOptions* options, TteProgram** out_program, Open&& open) {
  if (out_program == nullptr) {
    return invalid("out_program is NULL");
  }
  *out_program = nullptr;
  tte::ProgramOptions parsed;
  tte::Status status = read_options(options, &parsed);
  if (!status.ok()) {
    return status;
  }
  std::shared_ptr<tte::Program> program;
  status = open(std::move(parsed), &program);
  if (!status.ok()) {
    return status;
  }
  auto handle = std::make_unique<TteProgram>();
  handle->program = std::move(program);
  *out_program = handle.release();
  return tte::Status::Ok();
}

}  // namespace

extern "C" {

using tte::c_boundary::status_call;
using tte::c_boundary::value_call;
using tte::c_boundary::void_call;

TTE_API TteStatus tte_program_open_file(const char* path, const TteProgramOptions* options,
                                        TteProgram** out_program, TteError* error) {
  return program_call("tte_program_open_file", nullptr, error, [&] {
    if (path == nullptr) {
      return invalid("path is NULL");
    }
    return open_program(options, out_program,
                        [&](tte::ProgramOptions parsed, std::shared_ptr<tte::Program>* program) {
                          return tte::Program::open_file(path, std::move(parsed), program);
                        });
  });
}

TTE_API TteStatus tte_program_open_buffer(const void* data, size_t size,
                                          const TteProgramOptions* options,
                                          TteProgram** out_program, TteError* error) {
  return program_call("tte_program_open_buffer", nullptr, error, [&] {
    if (data == nullptr) {
      return invalid("data is NULL");
    }
    return open_program(options, out_program,
                        [&](tte::ProgramOptions parsed, std::shared_ptr<tte::Program>* program) {
                          return tte::Program::open_buffer(data, size, std::move(parsed), program);
                        });
  });
}

TTE_API void tte_program_close(TteProgram* program) {
  void_call("tte_program_close", [program] {
    if (program != nullptr) {
      std::unique_ptr<TteProgram> owned(program);
      owned->program->close();
    }
  });
}

TTE_API const char* tte_program_last_error(const TteProgram* program) {
  return value_call("tte_program_last_error", "",
                    [program] { return program == nullptr ? "" : program->last_error.c_str(); });
}

TTE_API TteStatus tte_program_num_methods(TteProgram* program, size_t* out_count, TteError* error) {
  return program_call("tte_program_num_methods", program, error, [&] {
    if (program == nullptr || out_count == nullptr) {
      return invalid("program and out_count must not be NULL");
    }
    *out_count = program->program->method_names().size();
    return tte::Status::Ok();
  });
}

TTE_API TteStatus tte_program_method_name(TteProgram* program, size_t index, const char** out_name,
                                          TteError* error) {
  return program_call("tte_program_method_name", program, error, [&] {
    if (program == nullptr || out_name == nullptr) {
      return invalid("program and out_name must not be NULL");
    }
    const auto& names = program->program->method_names();
    if (index >= names.size()) {
      return tte::Status(TTE_ERROR_INVALID_ARGUMENT, "method index " + std::to_string(index) +
                                                         " is out of range: the program has " +
                                                         std::to_string(names.size()) + " methods");
    }
    *out_name = names[index].c_str();
    return tte::Status::Ok();
  });
}

TTE_API TteStatus tte_program_load_method(TteProgram* program, const char* method,
                                          TteError* error) {
  return program_call("tte_program_load_method", program, error, [&] {
    if (program == nullptr || method == nullptr) {
      return invalid("program and method must not be NULL");
    }
    return program->program->load_method(method);
  });
}

TTE_API TteStatus tte_program_method_io_count(TteProgram* program, const char* method,
                                              size_t* out_num_inputs, size_t* out_num_outputs,
                                              TteError* error) {
  return program_call("tte_program_method_io_count", program, error, [&] {
    if (program == nullptr || method == nullptr || out_num_inputs == nullptr ||
        out_num_outputs == nullptr) {
      return invalid("program, method and the counts must not be NULL");
    }
    return program->program->io_count(method, out_num_inputs, out_num_outputs);
  });
}

TTE_API TteStatus tte_program_input_info(TteProgram* program, const char* method, size_t index,
                                         TteValueInfo* out_info, TteError* error) {
  return program_call("tte_program_input_info", program, error, [&] {
    if (program == nullptr || method == nullptr || out_info == nullptr) {
      return invalid("program, method and out_info must not be NULL");
    }
    return program->program->input_info(method, index, out_info);
  });
}

TTE_API TteStatus tte_program_output_info(TteProgram* program, const char* method, size_t index,
                                          TteValueInfo* out_info, TteError* error) {
  return program_call("tte_program_output_info", program, error, [&] {
    if (program == nullptr || method == nullptr || out_info == nullptr) {
      return invalid("program, method and out_info must not be NULL");
    }
    return program->program->output_info(method, index, out_info);
  });
}

TTE_API TteStatus tte_program_describe_json(TteProgram* program, char** out_json, TteError* error) {
  return program_call("tte_program_describe_json", program, error, [&] {
    if (program == nullptr || out_json == nullptr) {
      return invalid("program and out_json must not be NULL");
    }
    *out_json = nullptr;
    std::string json;
    tte::Status status = program->program->describe_json(&json);
    if (!status.ok()) {
      return status;
    }
    // Freed with tte_free_string, which releases with free().
    auto* copy = static_cast<char*>(std::malloc(json.size() + 1));
    if (copy == nullptr) {
      return tte::Status(TTE_ERROR_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    std::memcpy(copy, json.c_str(), json.size() + 1);
    *out_json = copy;
    return tte::Status::Ok();
  });
}

TTE_API TteStatus tte_program_run(TteProgram* program, const char* method, const TteInput* inputs,
                                  size_t num_inputs, int32_t copy_outputs, TteOutput* outputs,
                                  size_t num_outputs, TteError* error) {
  return program_call("tte_program_run", program, error, [&] {
    if (program == nullptr || method == nullptr) {
      return invalid("program and method must not be NULL");
    }
    tte::RunOptions options;
    options.copy_outputs = copy_outputs != 0;
    return program->program->run(method, inputs, num_inputs, options, outputs, num_outputs);
  });
}

TTE_API TteStatus tte_program_write_etdump(TteProgram* program, const char* path, TteError* error) {
  return program_call("tte_program_write_etdump", program, error, [&] {
    if (program == nullptr || path == nullptr) {
      return invalid("program and path must not be NULL");
    }
    return program->program->write_etdump(path);
  });
}

TTE_API TteStatus tte_program_get_method(TteProgram* program, const char* method,
                                         TteMethod** out_method, TteError* error) {
  return program_call("tte_program_get_method", program, error, [&] {
    if (program == nullptr || method == nullptr || out_method == nullptr) {
      return invalid("program, method and out_method must not be NULL");
    }
    *out_method = nullptr;
    tte::MethodState* state = nullptr;
    tte::Status status = program->program->get_method(method, &state);
    if (!status.ok()) {
      return status;
    }
    *out_method = new TteMethod{program->program, state};
    return tte::Status::Ok();
  });
}

TTE_API void tte_method_release(TteMethod* method) {
  void_call("tte_method_release", [method] { delete method; });
}

TTE_API TteStatus tte_method_io_count(TteMethod* method, size_t* out_num_inputs,
                                      size_t* out_num_outputs, TteError* error) {
  return status_call("tte_method_io_count", error, [&] {
    if (method == nullptr || out_num_inputs == nullptr || out_num_outputs == nullptr) {
      return invalid("method and the counts must not be NULL");
    }
    // Fixed once the method is loaded, which the handle guarantees.
    *out_num_inputs = method->state->method->inputs_size();
    *out_num_outputs = method->state->method->outputs_size();
    return tte::Status::Ok();
  });
}

TTE_API TteStatus tte_method_run(TteMethod* method, const TteInput* inputs, size_t num_inputs,
                                 const TteRunOptions* options, TteOutput* outputs,
                                 size_t num_outputs, TteError* error) {
  return status_call("tte_method_run", error, [&] {
    if (method == nullptr) {
      return invalid("method must not be NULL");
    }
    tte::RunOptions run_options;
    if (options != nullptr) {
      const uint32_t size = options->struct_size;
      auto has = [size](size_t end) { return size >= end; };
      if (!has(offsetof(TteRunOptions, copy_outputs) + sizeof(int32_t))) {
        return invalid("TteRunOptions.struct_size is too small; set it to sizeof(TteRunOptions)");
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
    return method->program->run(*method->state, inputs, num_inputs, run_options, outputs,
                                num_outputs);
  });
}

}  // extern "C"
