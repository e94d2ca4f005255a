// What one TensorRTBackend delegate looked like at init, for
// tte_program_describe_json. A call that loads a method asks for them
// (CallContext::delegate_records); the backend's init adds one per delegate
// (backend/init_record.h). Loads through the stock runtime record nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

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

}  // namespace tte
