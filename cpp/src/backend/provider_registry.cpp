#include "backend/provider_registry.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <mutex>

#include "common/library_folder.h"
#include "common/logging.h"

namespace tte {
namespace {

// The fields of ABI version 1, up to and including `destroy`: what a version
// 1 provider must provide. Later fields are read only when struct_size says
// the provider has them.
constexpr size_t kAbiV1Size =
    offsetof(TteEngineProvider, destroy) + sizeof(TteEngineProvider::destroy);

const char* kind_name(TteProviderKind kind) {
  switch (kind) {
    case TTE_PROVIDER_NATIVE:
      return "native";
    case TTE_PROVIDER_PYTHON:
      return "python";
    default:
      return "other";
  }
}

// Provider libraries installed beside the plugin, registered when it loads:
// the native providers of TensorRT 11 and 10 (a build has those whose
// headers it found, cmake/TteNativeProvider.cmake).
constexpr const char* kBundledProviderLibraries[] = {"libtte_provider_tensorrt11.so",
                                                     "libtte_provider_tensorrt10.so"};

// The folder this library was loaded from.
std::string plugin_folder() {
  return library_folder(reinterpret_cast<const void*>(&plugin_folder));
}

int32_t host_log_enabled(int32_t level) { return log_enabled(level) ? 1 : 0; }

void host_log(int32_t level, const char* message) {
  if (message != nullptr && log_enabled(level)) {
    log_message(level, "engine provider", 0, "%s", message);
  }
}

// The backend's services for providers; lives as long as the process.
const TteProviderHost& provider_host() {
  static const TteProviderHost host{sizeof(TteProviderHost), &host_log_enabled, &host_log};
  return host;
}

}  // namespace

std::string native_provider_name(int32_t major) {
  return std::string(kNativeProviderAlias) + "-" + std::to_string(major);
}

int32_t native_provider_major(const std::string& name) {
  const std::string prefix = std::string(kNativeProviderAlias) + "-";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.size() > prefix.size() + 3) {
    return -1;
  }
  int32_t major = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') {
      return -1;
    }
    major = major * 10 + (name[i] - '0');
  }
  return major;
}

std::string check_provider_abi(const TteEngineProvider* provider) {
  if (provider == nullptr) {
    return "provider is NULL";
  }
  // Append-only: a provider of an older version is a shorter struct, which
  // struct_size already describes.
  if (provider->abi_version < TTE_ENGINE_PROVIDER_ABI_VERSION_MIN ||
      provider->abi_version > TTE_ENGINE_PROVIDER_ABI_VERSION) {
    return "provider ABI version " + std::to_string(provider->abi_version) +
           " is not supported (this backend speaks versions " +
           std::to_string(TTE_ENGINE_PROVIDER_ABI_VERSION_MIN) + " to " +
           std::to_string(TTE_ENGINE_PROVIDER_ABI_VERSION) +
           "); rebuild the provider against this engine_provider.h";
  }
  if (provider->struct_size < kAbiV1Size) {
    return "provider struct_size " + std::to_string(provider->struct_size) +
           " is smaller than version 1 needs (" + std::to_string(kAbiV1Size) +
           "); set struct_size = sizeof(TteEngineProvider)";
  }
  if (provider->name == nullptr || provider->name[0] == '\0') {
    return "provider has no name";
  }
  const std::string name = provider->name;
  if (provider->memory_kind != TTE_MEMORY_DEVICE && provider->memory_kind != TTE_MEMORY_HOST) {
    return "provider '" + name + "' has unknown memory_kind " +
           std::to_string(provider->memory_kind) +
           " (expected TTE_MEMORY_DEVICE or TTE_MEMORY_HOST)";
  }
  const struct {
    const char* field;
    bool present;
  } functions[] = {
      {"deserialize", provider->deserialize != nullptr},
      {"num_io_tensors", provider->num_io_tensors != nullptr},
      {"describe_io_tensor", provider->describe_io_tensor != nullptr},
      {"num_profiles", provider->num_profiles != nullptr},
      {"profile_shape", provider->profile_shape != nullptr},
      {"select_profile", provider->select_profile != nullptr},
      {"set_input_shape", provider->set_input_shape != nullptr},
      {"get_output_shape", provider->get_output_shape != nullptr},
      {"set_tensor_address", provider->set_tensor_address != nullptr},
      {"enqueue", provider->enqueue != nullptr},
      {"destroy", provider->destroy != nullptr},
  };
  for (const auto& function : functions) {
    if (!function.present) {
      return "provider '" + name + "' has no " + function.field + " function";
    }
  }
  return "";
}

EngineProvider::EngineProvider(const TteEngineProvider& abi, TteProviderKind kind,
                               uint64_t sequence)
    : kind_(kind), sequence_(sequence) {
  // A provider built against an older header is shorter: copy only what it
  // has and leave later fields zero.
  std::memcpy(&abi_, &abi, std::min<size_t>(abi.struct_size, sizeof(abi_)));
  abi_.struct_size = sizeof(abi_);
  name_ = abi.name;
  abi_.name = name_.c_str();
}

Status EngineProvider::call_failed(TteStatus code, const TteError& error,
                                   const std::string& what) const {
  return from_c_status(code, error)
      .prefixed("engine provider '" + name_ + "': " + what + " failed: ");
}

bool EngineProvider::engine_capturable(TteEngine* engine, void* stream) const {
  if (abi_.engine_capturable == nullptr) {
    return true;
  }
  int32_t capturable = 0;
  TteError error{};
  const TteStatus status = abi_.engine_capturable(engine, stream, &capturable, &error);
  if (status != TTE_OK) {
    TTE_LOG(WARNING, "%s", call_failed(status, error, "engine_capturable").message().c_str());
    return false;
  }
  return capturable != 0;
}

std::string EngineProvider::describe_runtime() const {
  if (abi_.describe_runtime == nullptr) {
    return "";
  }
  char text[TTE_ERROR_MESSAGE_CAPACITY] = {};
  TteError error{};
  const TteStatus status = abi_.describe_runtime(abi_.user_data, text, sizeof(text), &error);
  if (status != TTE_OK) {
    return call_failed(status, error, "describe_runtime").message();
  }
  text[sizeof(text) - 1] = '\0';
  return text;
}

EngineProvider::~EngineProvider() {
  TTE_LOG(DEBUG, "releasing engine provider '%s'", name_.c_str());
  if (abi_.release != nullptr) {
    abi_.release(abi_.user_data);
  }
}

ProviderRegistry& ProviderRegistry::instance() {
  static ProviderRegistry* registry = new ProviderRegistry();
  return *registry;
}

Status ProviderRegistry::add(const TteEngineProvider* provider, TteProviderKind kind) {
  std::string problem = check_provider_abi(provider);
  if (problem.empty() && kind != TTE_PROVIDER_NATIVE && kind != TTE_PROVIDER_PYTHON &&
      kind != TTE_PROVIDER_OTHER) {
    problem = "unknown provider kind " + std::to_string(kind) +
              " (expected TTE_PROVIDER_NATIVE, TTE_PROVIDER_PYTHON or TTE_PROVIDER_OTHER)";
  }
  if (!problem.empty()) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "cannot register engine provider: " + problem);
  }
  std::shared_ptr<EngineProvider> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& existing : providers_) {
      if (existing->name() == provider->name) {
        return Status(TTE_ERROR_INVALID_ARGUMENT,
                      std::string("engine provider '") + provider->name +
                          "' is already registered; unregister it first or choose another name");
      }
    }
    entry = std::make_shared<EngineProvider>(*provider, kind, next_sequence_++);
    auto position = std::upper_bound(
        providers_.begin(), providers_.end(), entry,
        [](const ProviderRef& a, const ProviderRef& b) {
          return a->kind() != b->kind() ? a->kind() < b->kind() : a->sequence() < b->sequence();
        });
    providers_.insert(position, entry);
  }
  TTE_LOG(INFO, "registered %s engine provider '%s' (%s memory)", kind_name(kind),
          entry->name().c_str(), entry->host_memory() ? "host" : "device");
  if (entry->abi().attach_host != nullptr) {
    entry->abi().attach_host(entry->abi().user_data, &provider_host());
  }
  return Status::Ok();
}

Status ProviderRegistry::remove(const char* name) {
  if (name == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "cannot unregister engine provider: name is NULL");
  }
  ProviderRef removed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(providers_.begin(), providers_.end(),
                           [&](const ProviderRef& p) { return p->name() == name; });
    if (it == providers_.end()) {
      return Status(TTE_ERROR_NOT_FOUND,
                    std::string("engine provider '") + name + "' is not registered");
    }
    removed = std::move(*it);
    providers_.erase(it);
  }
  // `removed` is dropped here, outside the lock: when no engine holds the
  // provider, its release callback runs now and may itself call into the
  // registry.
  return Status::Ok();
}

std::vector<ProviderRef> ProviderRegistry::providers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return providers_;
}

ProviderRef ProviderRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& provider : providers_) {
    if (provider->name() == name) {
      return provider;
    }
  }
  return nullptr;
}

size_t ProviderRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return providers_.size();
}

const char* ProviderRegistry::name_at(size_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return index < providers_.size() ? providers_[index]->name().c_str() : nullptr;
}

Status ProviderRegistry::load_library(const char* path, TteProviderKind kind) {
  if (path == nullptr || path[0] == '\0') {
    return Status(TTE_ERROR_INVALID_ARGUMENT, "cannot load engine provider library: path is empty");
  }
  // RTLD_LOCAL keeps a provider's TensorRT symbols from clashing with another
  // provider's; never dlclose, since engines keep running its code.
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return Status(TTE_ERROR_NOT_FOUND, std::string("cannot load engine provider library '") + path +
                                           "': " + (why != nullptr ? why : "unknown dlopen error"));
  }
  dlerror();
  auto entry =
      reinterpret_cast<TteEngineProviderEntryFn>(dlsym(library, TTE_ENGINE_PROVIDER_ENTRY_SYMBOL));
  if (entry == nullptr) {
    return Status(TTE_ERROR_INVALID_ARGUMENT,
                  std::string("'") + path + "' is not an engine provider library: it exports no " +
                      TTE_ENGINE_PROVIDER_ENTRY_SYMBOL + " function");
  }
  // Newest first: a library built against an older header answers only its
  // own version.
  const TteEngineProvider* provider = nullptr;
  for (uint32_t version = TTE_ENGINE_PROVIDER_ABI_VERSION;
       provider == nullptr && version >= TTE_ENGINE_PROVIDER_ABI_VERSION_MIN; --version) {
    provider = entry(version);
  }
  if (provider == nullptr) {
    return Status(TTE_ERROR_NOT_SUPPORTED, std::string("engine provider library '") + path +
                                               "' cannot serve provider ABI versions " +
                                               std::to_string(TTE_ENGINE_PROVIDER_ABI_VERSION_MIN) +
                                               " to " +
                                               std::to_string(TTE_ENGINE_PROVIDER_ABI_VERSION) +
                                               ": rebuild it against this engine_provider.h");
  }
  const Status status = add(provider, kind);
  return status.ok() ? status : Status(status.code(), status.message() + " (from '" + path + "')");
}

void ProviderRegistry::load_bundled_providers() {
  const std::string folder = plugin_folder();
  std::string errors;
  for (const char* file : kBundledProviderLibraries) {
    const std::string path = folder + file;
    if (access(path.c_str(), F_OK) != 0) {
      // Built without it: not an error, but doctor says so.
      errors += (errors.empty() ? "" : "; ") + std::string(file) + " is not installed beside " +
                "the plugin (this build has no native provider of that TensorRT major)";
      continue;
    }
    const Status status = load_library(path.c_str(), TTE_PROVIDER_NATIVE);
    if (!status.ok()) {
      TTE_LOG(INFO, "%s", status.message().c_str());
      errors += (errors.empty() ? "" : "; ") + status.message();
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  bundled_error_ = errors;
}

std::string ProviderRegistry::bundled_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bundled_error_;
}

}  // namespace tte
