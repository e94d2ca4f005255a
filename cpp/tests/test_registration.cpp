// The plugin's registration of `TensorRTBackend` and the plugin group of the
// C API. A second copy of the plugin stands in for another library that
// registers the same name: its registration fails, and it says who owns the
// name; with ExecuTorch's registry full it says that instead.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <executorch/runtime/core/device_allocator.h>

#include "delegate_harness.h"

namespace tte_test {
namespace {

namespace fs = std::filesystem;

TEST(Registration, ThisLibraryOwnsTheName) {
  TteError error{};
  EXPECT_EQ(tte_registration_status(&error), TTE_OK);
  EXPECT_EQ(tte_owns_backend_registration(), 1);
  ASSERT_NE(tte_registration_owner_path(), nullptr);
  EXPECT_EQ(fs::canonical(tte_registration_owner_path()), fs::canonical(tte_library_path()));
  ASSERT_NE(backend(), nullptr);
  EXPECT_TRUE(backend()->is_available());
}

TEST(Plugin, ReportsVersions) {
  EXPECT_EQ(tte_c_api_version(), TTE_C_API_VERSION);
  EXPECT_STRNE(tte_version(), "");
  EXPECT_STREQ(tte_executorch_version(), "1.5.1");
  EXPECT_NE(std::string(tte_library_path()).find("libexecutorch_backend_tensorrt"),
            std::string::npos);
}

TEST(Plugin, LogLevel) {
  if (std::getenv("TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL") == nullptr) {
    EXPECT_EQ(tte_get_log_level(), TTE_LOG_WARNING) << "the default level";
  }
  const TteLogLevel before = tte_get_log_level();
  tte_set_log_level(TTE_LOG_DEBUG);
  EXPECT_EQ(tte_get_log_level(), TTE_LOG_DEBUG);
  tte_set_log_level(42);
  EXPECT_EQ(tte_get_log_level(), TTE_LOG_OFF) << "out-of-range levels clamp";
  tte_set_log_level(before);
}

TEST(Plugin, OffSilencesErrors) {
  const TteLogLevel before = tte_get_log_level();
  tte_set_log_level(TTE_LOG_OFF);
  std::string text;
  {
    StderrCapture log;
    EXPECT_EQ(tte_unregister_engine_provider("nobody", nullptr), TTE_ERROR_NOT_FOUND);
    text = log.text();
  }
  tte_set_log_level(before);
  EXPECT_EQ(text.find("nobody"), std::string::npos) << text;
}

TEST(Plugin, CudaDeviceCountNeverFails) {
  EXPECT_GE(tte_cuda_device_count(), 0);
  EXPECT_EQ(tte_cuda_device_count(), tte_cuda_device_count());
}

TEST(Plugin, CudaAllocatorIsRegistered) {
  // The CPU ExecuTorch wheel ships no CUDA backend, so the allocator is ours;
  // with ExecuTorch's CUDA backend beside libexecutorch.so it would be that.
  const std::string owner = tte_cuda_allocator_owner();
  EXPECT_TRUE(owner == "torch_tensorrt_executorch" || owner == "executorch_cuda_backend") << owner;
  EXPECT_NE(et::get_device_allocator(executorch::runtime::etensor::DeviceType::CUDA), nullptr);
}

// Loads a private copy of the plugin (RTLD_LOCAL: its own statics, the same
// ExecuTorch registry) and returns its handle.
void* load_plugin_copy(const std::string& tag) {
  const fs::path copy = fs::temp_directory_path() /
                        ("tte-plugin-copy-" + std::to_string(getpid()) + "-" + tag + ".so");
  fs::copy_file(tte_library_path(), copy, fs::copy_options::overwrite_existing);
  void* handle = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  fs::remove(copy);
  return handle;
}

class DummyBackend final : public et::BackendInterface {
 public:
  bool is_available() const override { return true; }
  et::Result<et::DelegateHandle*> init(et::BackendInitContext&, et::FreeableBuffer*,
                                       et::ArrayRef<et::CompileSpec>) const override {
    return et::Error::NotSupported;
  }
  et::Error execute(et::BackendExecutionContext&, et::DelegateHandle*,
                    et::Span<et::EValue*>) const override {
    return et::Error::NotSupported;
  }
};

TEST(Plugin, LogLevelFromTheEnvironmentAtLoad) {
  auto level_of_copy = [](const char* value, const std::string& tag) {
    setenv("TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL", value, 1);
    void* copy = load_plugin_copy(tag);
    unsetenv("TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL");
    EXPECT_NE(copy, nullptr) << dlerror();
    auto get = reinterpret_cast<decltype(&tte_get_log_level)>(dlsym(copy, "tte_get_log_level"));
    return get();
  };
  StderrCapture log;
  EXPECT_EQ(level_of_copy("error", "env-error"), TTE_LOG_ERROR);
  EXPECT_EQ(level_of_copy("DEBUG", "env-debug"), TTE_LOG_DEBUG);
  EXPECT_EQ(level_of_copy("off", "env-off"), TTE_LOG_OFF);
  EXPECT_EQ(level_of_copy("loud", "env-bad"), TTE_LOG_WARNING);
  EXPECT_NE(log.text().find("ignoring TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL='loud'"),
            std::string::npos)
      << log.text();
}

TEST(Registration, AnotherOwnerIsNamedAndTheRegistryFullIsSaid) {
  const std::string owner = tte_library_path();
  StderrCapture log;

  void* duplicate = load_plugin_copy("duplicate");
  ASSERT_NE(duplicate, nullptr) << dlerror();
  auto status_of = reinterpret_cast<decltype(&tte_registration_status)>(
      dlsym(duplicate, "tte_registration_status"));
  auto owns = reinterpret_cast<decltype(&tte_owns_backend_registration)>(
      dlsym(duplicate, "tte_owns_backend_registration"));
  auto allocator_owner = reinterpret_cast<decltype(&tte_cuda_allocator_owner)>(
      dlsym(duplicate, "tte_cuda_allocator_owner"));
  ASSERT_NE(status_of, nullptr);
  ASSERT_NE(owns, nullptr);
  TteError error{};
  EXPECT_EQ(status_of(&error), TTE_ERROR_INVALID_STATE);
  EXPECT_NE(std::string(error.message).find("another library registered the name"),
            std::string::npos)
      << error.message;
  EXPECT_NE(std::string(error.message).find(owner), std::string::npos) << error.message;
  EXPECT_EQ(owns(), 0);
  EXPECT_EQ(tte_owns_backend_registration(), 1) << "the first registration still wins";
  EXPECT_STRNE(allocator_owner(), "torch_tensorrt_executorch")
      << "the copy must step aside: the first library's allocator is registered";

  // Fill ExecuTorch's fixed registry, then load another copy.
  static DummyBackend dummy;
  static std::string names[32];
  for (int i = 0; i < 32; ++i) {
    names[i] = "TteDummyBackend" + std::to_string(i);
    if (et::register_backend(et::Backend{names[i].c_str(), &dummy}) != et::Error::Ok) break;
  }
  void* full = load_plugin_copy("full");
  ASSERT_NE(full, nullptr) << dlerror();
  status_of =
      reinterpret_cast<decltype(&tte_registration_status)>(dlsym(full, "tte_registration_status"));
  EXPECT_EQ(status_of(&error), TTE_ERROR_INTERNAL);
  EXPECT_NE(std::string(error.message).find("backend registry is full"), std::string::npos)
      << error.message;
  // Never dlclose'd: ExecuTorch keeps no pointer into the copies, but their
  // static destructors run at exit either way.
}

}  // namespace
}  // namespace tte_test
