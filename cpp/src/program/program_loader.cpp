#include "program/program_loader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>

#include "common/et_status.h"
#include "common/text.h"
#include "program/executorch_step.h"
#include "program/ptd_file_checks.h"
#include "program/pte_file_checks.h"
#include "program/tracked_file_loader.h"

namespace tte {

namespace et = executorch::runtime;
using executorch::extension::BufferDataLoader;
using executorch::extension::FileDataLoader;

namespace {

// A copy of `size` bytes the program keeps for its lifetime.
Status keep_copy(const void* data, size_t size, const char* what, OpenedProgram* out,
                 const AlignedHostBuffer** copy) {
  AlignedHostBuffer buffer;
  if (buffer.reserve(size) != cudaSuccess) {
    return Status(TTE_ERROR_HOST_OUT_OF_MEMORY, std::string("cannot copy the ") + what + " (" +
                                                    std::to_string(size) +
                                                    " bytes of host memory)");
  }
  if (size > 0) {
    std::memcpy(buffer.data(), data, size);
  }
  out->owned_bytes.push_back(std::move(buffer));
  *copy = &out->owned_bytes.back();
  return Status::Ok();
}

// A FileDataLoader over `file`; for the program's own file, one that reads
// its engines into memory populated at once and, when the file has not
// changed just before it was opened (WatchedFile::settled), records where
// they came from (engine-cache keys without hashing the plans).
Status file_loader(CallContext& call, const WatchedFile& file, const char* what,
                   bool track_segments, std::unique_ptr<et::DataLoader>* out) {
  ExecuTorchStep step(call, ProgramStep::kOpen);
  auto loader = FileDataLoader::from(file.path().c_str());
  if (!loader.ok()) {
    return step.failed(loader.error(),
                       std::string("cannot open ") + what + " '" + file.path() + "'");
  }
  if (track_segments) {
    *out = std::make_unique<TrackedFileLoader>(std::move(*loader), file.path(),
                                               file.settled() ? file.identity_key() : "");
  } else {
    *out = std::make_unique<FileDataLoader>(std::move(*loader));
  }
  return Status::Ok();
}

std::unique_ptr<et::EventTracer> make_tracer(const ProgramOptions& options) {
  if (!options.enable_etdump) {
    return nullptr;
  }
  return std::make_unique<executorch::etdump::ETDumpGen>();
}

// The module over `source`. Module takes several .ptd files only by path,
// with the program by path too; everything else goes through one program
// loader (for a file, one that records its backend segments' origin) and at
// most one data loader. Either way files are read through FileDataLoader
// (LoadMode::File), never mapped.
Status make_module(CallContext& call, const ProgramSource& source, const ProgramOptions& options,
                   OpenedProgram* out) {
  if (source.is_file() && options.data_buffers.empty() && options.data_paths.size() > 1) {
    out->module = std::make_unique<ProgramModule>(
        source.path, options.data_paths, ProgramModule::LoadMode::File, make_tracer(options));
    return Status::Ok();
  }
  if (options.data_buffers.size() + options.data_paths.size() > 1) {
    return Status(TTE_ERROR_NOT_SUPPORTED,
                  source.is_file()
                      ? "several .ptd sources with at least one buffer: ExecuTorch's Module "
                        "takes one data loader here; pass every .ptd as a path, or a single buffer"
                      : "a program opened from a buffer takes at most one .ptd (ExecuTorch's "
                        "Module takes one data loader here); open the program from a path to "
                        "use several");
  }
  std::unique_ptr<et::DataLoader> program_loader;
  Status status;
  if (source.is_file()) {
    status =
        file_loader(call, *out->files.front(), "program", /*track_segments=*/true, &program_loader);
  } else {
    const AlignedHostBuffer* copy = nullptr;
    status = keep_copy(source.data, source.size, "program buffer", out, &copy);
    if (status.ok()) {
      program_loader = std::make_unique<BufferDataLoader>(copy->data(), source.size);
    }
  }
  std::unique_ptr<et::DataLoader> data_loader;
  if (status.ok() && !options.data_paths.empty()) {
    // out->files: the program's file first when there is one, then the .ptd.
    status = file_loader(call, *out->files[source.is_file() ? 1 : 0], "data file",
                         /*track_segments=*/false, &data_loader);
  } else if (status.ok() && !options.data_buffers.empty()) {
    const std::vector<uint8_t>& bytes = options.data_buffers[0];
    const AlignedHostBuffer* copy = nullptr;
    status = keep_copy(bytes.data(), bytes.size(), ".ptd buffer", out, &copy);
    if (status.ok()) {
      data_loader = std::make_unique<BufferDataLoader>(copy->data(), bytes.size());
    }
  }
  if (!status.ok()) {
    return status;
  }
  out->module = std::make_unique<ProgramModule>(std::move(program_loader), nullptr, nullptr,
                                                make_tracer(options), std::move(data_loader));
  return Status::Ok();
}

Status load_and_name_methods(CallContext& call, const ProgramOptions& options,
                             const std::string& label, OpenedProgram* out) {
  BackendOptionsMap backend_options;
  Status status = backend_options.build(options.backend_options);
  if (!status.ok()) {
    return status;
  }
  // Module deep-copies the map; InternalConsistency makes a damaged file an
  // error instead of undefined behaviour.
  ExecuTorchStep step(call, ProgramStep::kOpen);
  const et::Error error =
      out->module->load(backend_options.map(), et::Program::Verification::InternalConsistency);
  if (error != et::Error::Ok) {
    return step.failed(error, "cannot load " + label, "", out->has_data_files);
  }
  const std::shared_ptr<et::Program> program = out->module->program();
  for (size_t i = 0; i < program->num_methods(); ++i) {
    auto name = program->get_method_name(i);
    if (!name.ok()) {
      return step.failed(name.error(), "cannot load " + label + ": the name of method " +
                                           std::to_string(i) + " cannot be read");
    }
    // Method names cross the C API as UTF-8 (Python decodes them) and are
    // quoted in one-line messages; exir writes identifiers, so a name that is
    // not UTF-8 or holds control characters is damage.
    if (printable(*name) != *name) {
      return Status(TTE_ERROR_INVALID_PROGRAM,
                    "cannot load " + label + ": the name of method " + std::to_string(i) + " ('" +
                        printable(*name) +
                        "') is not valid UTF-8 or holds control characters, so the file is "
                        "damaged: export it again, or copy it again if it was transferred");
    }
    out->method_names.emplace_back(*name);
  }
  return Status::Ok();
}

// The first 64 bytes of `file` (all of a shorter one).
Status read_head(const WatchedFile& file, std::vector<uint8_t>* out) {
  return file.read(0, static_cast<size_t>(std::min<uint64_t>(file.size(), 64)), out);
}

// The first bytes of `file` up to what `extent` (given the head and the file
// size) says the flatbuffer covers.
template <typename Extent>
Status read_flatbuffer(const WatchedFile& file, Extent extent, std::vector<uint8_t>* out) {
  std::vector<uint8_t> head;
  Status status = read_head(file, &head);
  if (status.ok()) {
    status = file.read(0, static_cast<size_t>(extent(head.data(), head.size(), file.size())), out);
  }
  return status;
}

// The .ptd files, before ExecuTorch reads them (it does not verify them):
// the watched files, then the caller's buffers. Keys without a tensor
// layout go to `keys_without_layout`, for check_fields.
Status check_data_files(const ProgramSource& source, const ProgramOptions& options,
                        const OpenedProgram& opened,
                        std::vector<std::string>* keys_without_layout) {
  for (size_t i = source.is_file() ? 1 : 0; i < opened.files.size(); ++i) {
    const WatchedFile& file = *opened.files[i];
    const std::string label = "data file '" + file.path() + "'";
    std::vector<uint8_t> head;
    std::vector<uint8_t> flatbuffer;
    Status status = read_head(file, &head);
    if (status.ok()) {
      status = check_data_file_head(head.data(), head.size(), label);
    }
    if (status.ok()) {
      status = read_flatbuffer(file, data_file_flatbuffer_extent, &flatbuffer);
    }
    if (status.ok()) {
      status =
          check_data_file_fields(flatbuffer.data(), flatbuffer.size(), label, keys_without_layout);
    }
    if (!status.ok()) {
      return status;
    }
  }
  for (const std::vector<uint8_t>& bytes : options.data_buffers) {
    const uint64_t extent = data_file_flatbuffer_extent(bytes.data(), bytes.size(), bytes.size());
    Status status = check_data_file_head(bytes.data(), bytes.size(), ".ptd buffer");
    if (status.ok()) {
      status = check_data_file_fields(bytes.data(), static_cast<size_t>(extent), ".ptd buffer",
                                      keys_without_layout);
    }
    if (!status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

// The program's own bytes, for check_required_fields and
// check_external_tensors: the caller's copy, or the flatbuffer part of the
// file (segments, where engines live, are not read), read once more through
// the watched descriptor.
Status check_fields(const ProgramSource& source, const std::string& label,
                    const std::vector<std::string>& keys_without_layout, OpenedProgram* opened) {
  std::vector<uint8_t> flatbuffer;
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (source.is_file()) {
    Status status = read_flatbuffer(*opened->files.front(), flatbuffer_extent, &flatbuffer);
    if (!status.ok()) {
      return status;
    }
    data = flatbuffer.data();
    size = flatbuffer.size();
  } else {
    data = static_cast<const uint8_t*>(opened->owned_bytes.front().data());
    size = source.size;
  }
  Status status = check_required_fields(data, size, label);
  if (!status.ok()) {
    return status;
  }
  for (const ExternalTensor& tensor : external_tensors(data, size)) {
    // ExecuTorch dereferences the tensor layout of what it reads as a tensor.
    if (std::find(keys_without_layout.begin(), keys_without_layout.end(), tensor.key) !=
        keys_without_layout.end()) {
      return Status(TTE_ERROR_INVALID_PROGRAM,
                    "cannot load " + label + ": it reads '" + printable(tensor.key) +
                        "' from a .ptd as a tensor, but the .ptd holding it gives no tensor "
                        "layout for it (a damaged .ptd, or one written for another program): "
                        "pass the .ptd written when the program was exported");
    }
    opened->external_key.emplace(tensor.method, tensor.key);
  }
  return Status::Ok();
}

}  // namespace

Status OpenedProgram::files_unchanged() const {
  for (const auto& file : files) {
    Status status = file->unchanged(/*path_too=*/false);
    if (!status.ok()) {
      return status;
    }
  }
  return Status::Ok();
}

Status open_program(CallContext& call, const ProgramSource& source, const ProgramOptions& options,
                    OpenedProgram* out) {
  if (!source.is_file() && source.data == nullptr && source.size > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "program buffer is NULL");
  }
  out->has_data_files = !options.data_paths.empty() || !options.data_buffers.empty();
  // Opened before ExecuTorch opens them, so that a file replaced or rewritten
  // while the program is read is noticed below.
  std::vector<std::pair<std::string, const char*>> paths;
  if (source.is_file()) {
    paths.emplace_back(source.path, "program");
  }
  for (const std::string& path : options.data_paths) {
    paths.emplace_back(path, "data file");
  }
  for (const auto& [path, what] : paths) {
    std::unique_ptr<WatchedFile> file;
    Status status = WatchedFile::open(path, what, &file);
    if (!status.ok()) {
      return status;
    }
    out->files.push_back(std::move(file));
  }
  const std::string label = source.is_file() ? "program '" + source.path + "'" : "program buffer";
  std::vector<uint8_t> head;
  Status status;
  if (source.is_file()) {
    const WatchedFile& file = *out->files.front();
    status = read_head(file, &head);
    if (status.ok()) {
      status = check_program_head(head.data(), head.size(), file.size(), label);
    }
  } else {
    status = check_program_head(static_cast<const uint8_t*>(source.data), source.size, source.size,
                                label);
  }
  std::vector<std::string> keys_without_layout;
  if (status.ok()) {
    status = check_data_files(source, options, *out, &keys_without_layout);
  }
  if (status.ok()) {
    status = make_module(call, source, options, out);
  }
  if (status.ok()) {
    status = load_and_name_methods(call, options, label, out);
  }
  if (status.ok()) {
    status = check_fields(source, label, keys_without_layout, out);
  }
  // ExecuTorch and check_fields must have read the files that were opened,
  // unchanged.
  for (size_t i = 0; status.ok() && i < out->files.size(); ++i) {
    status = out->files[i]->unchanged(/*path_too=*/true);
  }
  return status;
}

}  // namespace tte
