// Opening a .pte (+ .ptd) through ExecuTorch's Module, from a file (memory
// mapped) or from caller bytes (copied): one path for both, which builds the
// data loaders, loads and verifies the program with the backend options,
// reads the method names and refuses programs that lack required fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "cuda/device_buffers.h"
#include "program/backend_options.h"
#include "program/program_module.h"

namespace tte {

struct ProgramOptions {
  std::vector<std::string> data_paths;
  std::vector<std::vector<uint8_t>> data_buffers;
  std::vector<BackendOptionValue> backend_options;
  bool enable_etdump = false;
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
};

Status open_program(const ProgramSource& source, const ProgramOptions& options, OpenedProgram* out);

}  // namespace tte
