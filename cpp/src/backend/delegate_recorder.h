// Collects what each TensorRTBackend delegate of a method looked like at
// init, for tte_program_describe_json. The Program API installs a recorder
// on the loading thread around Module::load_method; the backend's init adds
// one record per delegate when a recorder is installed, and nothing
// otherwise (loads through the stock Python runtime record nothing).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <executorch/runtime/backend/interface.h>

#include "common/status.h"

namespace tte {

struct DelegateRecord {
  std::string method;
  // tte_blob_describe_json's document for the delegate's blob.
  std::string blob_json;
  // Compile specs as key and raw value bytes.
  std::vector<std::pair<std::string, std::string>> compile_specs;
  // Name of the provider that deserialized the engine ("" if init failed
  // before that).
  std::string provider;
  // Why init failed, one line ("" when it succeeded). The Program API adds
  // it to the message of a failed method load.
  std::string error;
};

class DelegateRecorder {
 public:
  // The recorder installed on this thread, or nullptr.
  static DelegateRecorder* current();

  void add(DelegateRecord record) { records_.push_back(std::move(record)); }
  const std::vector<DelegateRecord>& records() const { return records_; }

  // Installs `recorder` on this thread for the guard's lifetime.
  class Scope {
   public:
    explicit Scope(DelegateRecorder* recorder);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    DelegateRecorder* previous_;
  };

 private:
  std::vector<DelegateRecord> records_;
};

struct DelegateBlob;

// One delegate's record, added to the thread's recorder (when one is
// installed) however init ends, with the reason when it failed.
class InitRecord {
 public:
  InitRecord(const executorch::runtime::BackendInitContext& context,
             executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs);
  ~InitRecord();
  InitRecord(const InitRecord&) = delete;
  InitRecord& operator=(const InitRecord&) = delete;

  void set_blob(const DelegateBlob& blob);
  void set_provider(const std::string& name) { record_.provider = name; }
  void set_result(const Status& status) { record_.error = status.message(); }

 private:
  DelegateRecorder* recorder_;
  DelegateRecord record_;
};

}  // namespace tte
