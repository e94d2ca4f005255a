// A .pte program opened through ExecuTorch's Module, run with DLPack tensors:
// what the "Programs" group of c_api.h does, in C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// The outcome of a Program call: TTE_OK, or a status and one line saying what
// was expected, what was found and, where it helps, what to do.
struct ProgramStatus {
  TteStatus code = TTE_OK;
  std::string message;

  bool ok() const { return code == TTE_OK; }
  static ProgramStatus Ok() { return {}; }
  static ProgramStatus Fail(TteStatus code, std::string message) {
    return {code, std::move(message)};
  }
};

// A load-time option for one backend, owned.
struct BackendOptionValue {
  std::string backend;
  std::string key;
  TteOptionType type = TTE_OPTION_BOOL;
  int64_t int_value = 0;
  std::string string_value;
};

struct ProgramOptions {
  std::vector<std::string> data_paths;
  std::vector<std::vector<uint8_t>> data_buffers;
  std::vector<BackendOptionValue> backend_options;
  bool enable_etdump = false;
};

class ProgramModule;
struct MethodState;

class Program {
 public:
  // Opens and verifies (InternalConsistency) a program; methods load later.
  static ProgramStatus open_file(const std::string& path, ProgramOptions options,
                                 std::unique_ptr<Program>* out);
  // The bytes are copied and kept for the program's lifetime.
  static ProgramStatus open_buffer(const void* data, size_t size, ProgramOptions options,
                                   std::unique_ptr<Program>* out);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const std::vector<std::string>& method_names() const { return method_names_; }

  // Initializes the method's delegates now (recording what each
  // TensorRTBackend delegate looked like, for describe_json).
  ProgramStatus load_method(const std::string& method);

  ProgramStatus io_count(const std::string& method, size_t* num_inputs, size_t* num_outputs);
  // Metadata from the program; device type and index from the loaded method
  // (loaded here if needed; -1 when it cannot be loaded).
  ProgramStatus input_info(const std::string& method, size_t index, TteValueInfo* info);
  ProgramStatus output_info(const std::string& method, size_t index, TteValueInfo* info);

  ProgramStatus describe_json(std::string* json);

  // Sets inputs, executes and returns outputs; atomic with respect to other
  // threads using this program. On failure every output is left NONE.
  ProgramStatus run(const std::string& method, const TteInput* inputs, size_t num_inputs,
                    bool copy_outputs, TteOutput* outputs, size_t num_outputs);

  // Writes the events recorded since open (or the last write) and starts a
  // new recording.
  ProgramStatus write_etdump(const std::string& path);

 private:
  Program();
  ProgramStatus finish_open(const std::string& label);
  ProgramStatus check_method(const std::string& method) const;
  ProgramStatus ensure_loaded(const std::string& method, MethodState** state);
  ProgramStatus value_info(const std::string& method, size_t index, bool is_input,
                           TteValueInfo* info);

  std::mutex mutex_;
  // Bytes of a program or .ptd opened from memory, 128-byte aligned.
  struct AlignedBytes;
  std::vector<std::unique_ptr<AlignedBytes>> owned_bytes_;
  std::unique_ptr<ProgramModule> module_;
  ProgramOptions options_;
  std::vector<std::string> method_names_;
  std::map<std::string, std::unique_ptr<MethodState>> methods_;
};

}  // namespace tte
