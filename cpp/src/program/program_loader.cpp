#include "program/program_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>

#include "common/et_status.h"
#include "program/pte_checks.h"

namespace tte {

namespace et = executorch::runtime;
using executorch::extension::BufferDataLoader;
using executorch::extension::MmapDataLoader;

namespace {

Status check_readable(const std::string& path, const char* what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status(TTE_ERROR_NOT_FOUND,
                  std::string("cannot open ") + what + " '" + path + "': " + std::strerror(errno));
  }
  ::close(fd);
  return Status::Ok();
}

// A copy of `size` bytes the program keeps for its lifetime.
Status keep_copy(const void* data, size_t size, const char* what, OpenedProgram* out,
                 const AlignedHostBuffer** copy) {
  AlignedHostBuffer buffer;
  if (buffer.reserve(size) != cudaSuccess) {
    return Status(TTE_ERROR_OUT_OF_MEMORY,
                  std::string("cannot copy the ") + what + " (" + std::to_string(size) + " bytes)");
  }
  if (size > 0) {
    std::memcpy(buffer.data(), data, size);
  }
  out->owned_bytes.push_back(std::move(buffer));
  *copy = &out->owned_bytes.back();
  return Status::Ok();
}

Status map_file(const std::string& path, const char* what, std::unique_ptr<et::DataLoader>* out) {
  auto loader =
      MmapDataLoader::from(path.c_str(), MmapDataLoader::MlockConfig::UseMlockIgnoreErrors);
  if (!loader.ok()) {
    return Status(status_code_of(loader.error()), std::string("cannot map ") + what + " '" + path +
                                                      "': " + et_error_text(loader.error()));
  }
  *out = std::make_unique<MmapDataLoader>(std::move(*loader));
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
// loader and at most one data loader.
Status make_module(const ProgramSource& source, const ProgramOptions& options, OpenedProgram* out) {
  constexpr auto kMode = ProgramModule::LoadMode::MmapUseMlockIgnoreErrors;
  if (source.is_file() && options.data_buffers.empty()) {
    out->module = std::make_unique<ProgramModule>(source.path, options.data_paths, kMode,
                                                  make_tracer(options));
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
    status = map_file(source.path, "program", &program_loader);
  } else {
    const AlignedHostBuffer* copy = nullptr;
    status = keep_copy(source.data, source.size, "program buffer", out, &copy);
    if (status.ok()) {
      program_loader = std::make_unique<BufferDataLoader>(copy->data(), source.size);
    }
  }
  std::unique_ptr<et::DataLoader> data_loader;
  if (status.ok() && !options.data_paths.empty()) {
    status = map_file(options.data_paths[0], "data file", &data_loader);
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

Status load_and_name_methods(const ProgramOptions& options, const std::string& label,
                             OpenedProgram* out) {
  BackendOptionsMap backend_options;
  Status status = backend_options.build(options.backend_options);
  if (!status.ok()) {
    return status;
  }
  // Module deep-copies the map; InternalConsistency makes a damaged file an
  // error instead of undefined behaviour.
  const et::Error error =
      out->module->load(backend_options.map(), et::Program::Verification::InternalConsistency);
  if (error != et::Error::Ok) {
    std::string hint;
    if (error == et::Error::InvalidProgram || error == et::Error::InvalidArgument ||
        error == et::Error::InvalidExternalData) {
      hint = ": not a valid ExecuTorch program, or a truncated or damaged one";
      if (!options.data_paths.empty() || !options.data_buffers.empty()) {
        hint += " (or a damaged .ptd)";
      }
    } else if (error == et::Error::NotSupported) {
      hint = ": written by an ExecuTorch this runtime cannot read";
    }
    return Status(
        error == et::Error::InvalidArgument ? TTE_ERROR_INVALID_PROGRAM : status_code_of(error),
        "cannot load " + label + hint + " (" + et_error_text(error) + ")");
  }
  const std::shared_ptr<et::Program> program = out->module->program();
  for (size_t i = 0; i < program->num_methods(); ++i) {
    auto name = program->get_method_name(i);
    if (!name.ok()) {
      return Status(TTE_ERROR_INVALID_PROGRAM, label + ": cannot read the name of method " +
                                                   std::to_string(i) + " (" +
                                                   et_error_text(name.error()) + ")");
    }
    out->method_names.emplace_back(*name);
  }
  return Status::Ok();
}

// The program's own bytes, for check_required_fields: the caller's copy, or
// the file mapped once more (without mlock).
Status check_fields(const ProgramSource& source, const OpenedProgram& opened,
                    const std::string& label) {
  if (!source.is_file()) {
    const AlignedHostBuffer& copy = opened.owned_bytes.front();
    return check_required_fields(static_cast<const uint8_t*>(copy.data()), source.size, label);
  }
  auto mapped = MmapDataLoader::from(source.path.c_str(), MmapDataLoader::MlockConfig::NoMlock);
  auto size = mapped.ok() ? mapped->size() : et::Result<size_t>(mapped.error());
  if (!size.ok()) {
    return Status::Ok();
  }
  auto bytes = mapped->load(
      0, *size, et::DataLoader::SegmentInfo(et::DataLoader::SegmentInfo::Type::Program));
  if (!bytes.ok()) {
    return Status::Ok();
  }
  return check_required_fields(static_cast<const uint8_t*>(bytes->data()), bytes->size(), label);
}

}  // namespace

Status open_program(const ProgramSource& source, const ProgramOptions& options,
                    OpenedProgram* out) {
  if (!source.is_file() && source.data == nullptr && source.size > 0) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "program buffer is NULL");
  }
  Status status = source.is_file() ? check_readable(source.path, "program") : Status::Ok();
  for (size_t i = 0; status.ok() && i < options.data_paths.size(); ++i) {
    status = check_readable(options.data_paths[i], "data file");
  }
  if (status.ok()) {
    status = make_module(source, options, out);
  }
  const std::string label = source.is_file() ? "program '" + source.path + "'" : "program buffer";
  if (status.ok()) {
    status = load_and_name_methods(options, label, out);
  }
  if (status.ok()) {
    status = check_fields(source, *out, label);
  }
  return status;
}

}  // namespace tte
