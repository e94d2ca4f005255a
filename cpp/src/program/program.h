// A .pte program opened through ExecuTorch's Module, run with DLPack tensors:
// what the "Programs" group of c_api.h does, in C++. This class holds the
// lock and the per-method state and orders the steps; each step lives in its
// own file (program_loader, pte_file_checks, ptd_file_checks,
// method_load_checks, program_inputs, program_outputs,
// program_metadata, etdump_writer). It is shared: the C API's handles and
// every output view hold it, so memory a view points at outlives close().
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/load_options.h"
#include "common/call_context.h"
#include "common/status.h"
#include "program/backend_options.h"
#include "program/program_loader.h"
#include "program/program_module.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace tte {

// How one run hands out its results and where its CUDA work goes.
struct RunOptions {
  bool copy_outputs = true;
  // Set: the run's stream, instead of the thread's caller stream.
  bool has_stream = false;
  void* stream = nullptr;
  TteOutputAllocator allocate_output = nullptr;
  void* allocator_context = nullptr;
};

class Program : public std::enable_shared_from_this<Program> {
 public:
  // Opens and verifies (InternalConsistency) a program; methods load later.
  static Status open_file(const std::string& path, ProgramOptions options,
                          std::shared_ptr<Program>* out);
  // The bytes are copied and kept for the program's lifetime.
  static Status open_buffer(const void* data, size_t size, ProgramOptions options,
                            std::shared_ptr<Program>* out);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const std::vector<std::string>& method_names() const { return opened_.method_names; }

  // Later runs fail with TTE_ERROR_INVALID_STATE; memory stays until the
  // last owner lets go.
  void close();

  // Initializes the method's delegates now (recording what each
  // TensorRTBackend delegate looked like, for describe_json).
  Status load_method(const std::string& method);
  // Loads the method and returns its state, which lives as long as the
  // program: what a method handle runs.
  Status get_method(const std::string& method, MethodState** state);

  Status io_count(const std::string& method, size_t* num_inputs, size_t* num_outputs);
  // Metadata from the program; device type and index from the loaded method
  // (loaded here if needed; -1 when it cannot be loaded).
  Status input_info(const std::string& method, size_t index, TteValueInfo* info);
  Status output_info(const std::string& method, size_t index, TteValueInfo* info);

  Status describe_json(std::string* json);

  // Sets inputs, executes and returns outputs; atomic with respect to other
  // threads using this program. On failure every output is left NONE.
  // Concurrent runs of one method use instances of their own (up to the
  // program option max_concurrent_runs; docs/architecture.md).
  Status run(MethodState& method, const TteInput* inputs, size_t num_inputs,
             const RunOptions& options, TteOutput* outputs, size_t num_outputs);
  Status run(const std::string& method, const TteInput* inputs, size_t num_inputs,
             const RunOptions& options, TteOutput* outputs, size_t num_outputs);

  // Writes the events recorded since open (or the last write) and starts a
  // new recording.
  Status write_etdump(const std::string& path);

 private:
  Program() = default;
  static Status open(const ProgramSource& source, ProgramOptions options,
                     std::shared_ptr<Program>* out);
  Status check_method(const std::string& method) const;
  MethodState& state_of(const std::string& method);
  // Loads the method on first use; a method that failed to load fails again
  // at once, with the same status.
  Status ensure_loaded(CallContext& call, const std::string& method, MethodState** state);
  Status load_method_once(CallContext& call, const std::string& method, MethodState& slot);
  Status run_locked(CallContext& call, MethodState& method, const TteInput* inputs,
                    size_t num_inputs, const RunOptions& options, TteOutput* outputs,
                    size_t num_outputs);
  Status value_info(const std::string& method, size_t index, bool is_input, TteValueInfo* info);
  // Runs `primary` (loaded) with mutex_ held, or, while another thread runs
  // it, an idle extra instance (made on demand up to max_concurrent_runs_).
  Status run_instance(CallContext& call, MethodState& primary, std::unique_lock<std::mutex>& lock,
                      const TteInput* inputs, size_t num_inputs, const RunOptions& options,
                      TteOutput* outputs, size_t num_outputs);
  // An idle extra instance of `primary` marked busy, or nullptr when all
  // max_concurrent_runs_ - 1 exist and are busy (or pooling is off).
  MethodInstance* borrow_extra(CallContext& call, MethodState& primary);
  Status load_extra(CallContext& call, const MethodState& primary,
                    std::unique_ptr<MethodInstance>* out);

  std::mutex mutex_;
  std::atomic<bool> closed_{false};
  // Runs of one method at once (option max_concurrent_runs, default
  // kDefaultMaxConcurrentRuns, backend/load_options.h's table); 1 serializes
  // them. Not for programs that record ETDump or read .ptd files: those
  // always serialize.
  int max_concurrent_runs_ = kDefaultMaxConcurrentRuns;
  // The load options again, for the extra instances' delegates.
  BackendOptionsMap backend_options_map_;
  ProgramOptions options_;
  OpenedProgram opened_;
  std::map<std::string, std::unique_ptr<MethodState>> methods_;
};

}  // namespace tte
