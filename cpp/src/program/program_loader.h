// Opening a .pte (+ .ptd) through ExecuTorch's Module, from a file or from
// caller bytes (copied): one path for both, which builds the data loaders,
// loads and verifies the program with the backend options, reads the method
// names and refuses programs that lack required fields.
//
// Files are read, never mapped: ExecuTorch's FileDataLoader copies what is
// loaded into private memory (the program's flatbuffer and constants for the
// program's life; a delegate's payload until the delegate has initialized
// and frees it), so a file cut short or rewritten while a program is open
// cannot fault the process (a mapping raises SIGBUS on the next read of a
// page past the new end). WatchedFile tells when a file has changed, so a
// method loaded later is refused instead of read from another file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/call_context.h"
#include "common/status.h"
#include "cuda/device_buffers.h"
#include "program/backend_options.h"
#include "program/program_module.h"
#include "program/watched_file.h"

namespace tte {

struct ProgramOptions {
  std::vector<std::string> data_paths;
  std::vector<std::vector<uint8_t>> data_buffers;
  std::vector<BackendOptionValue> backend_options;
  bool enable_etdump = false;
  // Bytes of host memory a method may plan; 0: what is available when it
  // loads (available_host_memory()).
  uint64_t max_planned_memory = 0;
};

// A program's bytes: a file path, or a buffer the loader copies.
struct ProgramSource {
  static ProgramSource file(std::string path) { return {true, std::move(path), nullptr, 0}; }
  static ProgramSource buffer(const void* data, size_t size) { return {false, "", data, size}; }
  bool is_file() const { return from_file; }

  bool from_file;
  std::string path;
  const void* data;
  size_t size;
};

struct OpenedProgram {
  // Copies of caller bytes the module's loaders read: destroy after module.
  std::vector<AlignedHostBuffer> owned_bytes;
  std::unique_ptr<ProgramModule> module;
  std::vector<std::string> method_names;
  // The files the module reads (the program's, then the .ptd paths').
  std::vector<std::unique_ptr<WatchedFile>> files;
  bool has_data_files = false;
  // Per method that reads tensors from a .ptd, the first such key.
  std::map<std::string, std::string> external_key;

  // Ok while every file is as it was when the program was opened.
  Status files_unchanged() const;
};

// `call` is the Program API call that opens it.
Status open_program(CallContext& call, const ProgramSource& source, const ProgramOptions& options,
                    OpenedProgram* out);

}  // namespace tte
