// The native TensorRT provider, compiled from its sources without the rest of
// the plugin. The first group runs anywhere: nothing reaches TensorRT before
// it should, and the run-time search for the TensorRT library (order, version
// checks, what it says when nothing is found) runs over stand-in libraries
// built beside this test (fake_nvinfer.c). The GPU group skips without a CUDA
// device and checks runtime creation and that plans TensorRT cannot read
// fail cleanly, with whatever TensorRT the provider finds (set
// TORCH_TENSORRT_EXECUTORCH_TENSORRT_LIBRARY to choose one).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <executorch/runtime/core/portable_type/scalar_type.h>

#include "blob/tensorrt_plan_header.h"
#include "native/data_types.h"
#include "native/error_recorder.h"
#include "native/native_tensorrt_provider.h"
#include "native/plan_header.h"
#include "native/runtime_pool.h"
#include "native/tensorrt_library.h"
#include "native/tensorrt_logger.h"
#include "plan_magic.h"

namespace {

using tte::native::ProviderEnvironment;

struct LogLine {
  TteLogLevel level;
  std::string text;
};

std::mutex g_log_mutex;
std::vector<LogLine> g_log;
int g_device_count_calls = 0;

bool log_everything(TteLogLevel) { return true; }

void capture_log(TteLogLevel level, const char*, int, const char* message) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.push_back({level, message});
}

int32_t no_devices() {
  ++g_device_count_calls;
  return 0;
}

int32_t real_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

size_t tensorrt_log_lines() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  size_t count = 0;
  for (const LogLine& line : g_log) {
    count += line.text.rfind("TensorRT: ", 0) == 0 ? 1 : 0;
  }
  return count;
}

// A provider table that is released at scope exit, as the registry would.
class ScopedProvider {
 public:
  explicit ScopedProvider(int32_t (*device_count)())
      : table_(tte::native::make_provider({device_count, &log_everything, &capture_log})) {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log.clear();
    g_device_count_calls = 0;
  }
  ~ScopedProvider() { table_.release(table_.user_data); }
  ScopedProvider(const ScopedProvider&) = delete;
  ScopedProvider& operator=(const ScopedProvider&) = delete;

  const TteEngineProvider& table() const { return table_; }

  TteStatus deserialize(const std::vector<uint8_t>& plan, TteEngine** engine, TteError* error,
                        int32_t device = 0) const {
    TteEngineLoadOptions options{};
    options.struct_size = sizeof(options);
    options.device_id = device;
    return table_.deserialize(table_.user_data, plan.data(), plan.size(), &options, engine, error);
  }

 private:
  TteEngineProvider table_;
};

std::vector<uint8_t> bytes_of(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::vector<uint8_t> test_engine_plan() {
  return bytes_of(std::string(tte::kTestEnginePlanMagic) +
                  R"({"op":"add_one","tensors":[{"name":"x","is_input":true,"dtype":"float32",)"
                  R"("profiles":[{"min":[4],"opt":[4],"max":[4]}]},)"
                  R"({"name":"y","is_input":false,"dtype":"float32","shape_of":"x"}]})");
}

// Starts like a serialized engine: the plan tag, serialization version 0 and,
// at byte 24, the version of the TensorRT this provider was built against;
// then seeded noise.
std::vector<uint8_t> tensorrt_looking_plan(size_t size, int major = NV_TENSORRT_MAJOR,
                                           int minor = NV_TENSORRT_MINOR,
                                           int patch = NV_TENSORRT_PATCH) {
  std::vector<uint8_t> plan(size);
  std::mt19937 noise(20240611);
  for (uint8_t& byte : plan) {
    byte = static_cast<uint8_t>(noise());
  }
  const uint8_t header[] = {'f', 't', 'r', 't', 0, 0, 0, 0};
  std::memcpy(plan.data(), header, sizeof(header));
  plan[24] = static_cast<uint8_t>(major);
  plan[25] = static_cast<uint8_t>(minor);
  plan[26] = static_cast<uint8_t>(patch);
  plan[27] = 0;
  return plan;
}

bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

TEST(NativeTensorRtProvider, DescribesItself) {
  ScopedProvider provider(&no_devices);
  const TteEngineProvider& table = provider.table();
  EXPECT_EQ(table.abi_version, TTE_ENGINE_PROVIDER_ABI_VERSION);
  EXPECT_EQ(table.struct_size, sizeof(TteEngineProvider));
  EXPECT_EQ(std::string(table.name), "tensorrt-native-" + std::to_string(NV_TENSORRT_MAJOR));
  EXPECT_EQ(table.memory_kind, TTE_MEMORY_DEVICE);
  EXPECT_EQ(table.enqueue_capturable, 1);
  EXPECT_NE(table.release, nullptr);
  // Building the table starts nothing.
  EXPECT_EQ(g_device_count_calls, 0);
  EXPECT_EQ(tensorrt_log_lines(), 0u);
}

// The device-memory and shared-engine entries are there and check their
// arguments (what they do with an engine needs a GPU and a real plan).
TEST(NativeTensorRtProvider, SharedMemoryAndEngineEntries) {
  ScopedProvider provider(&no_devices);
  const TteEngineProvider& table = provider.table();
  ASSERT_NE(table.device_memory_size, nullptr);
  ASSERT_NE(table.set_device_memory, nullptr);
  ASSERT_NE(table.create_execution_context, nullptr);
  TteError error{};
  int64_t bytes = -1;
  EXPECT_EQ(table.device_memory_size(nullptr, 0, &bytes, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table.set_device_memory(nullptr, nullptr, 0, &error), TTE_ERROR_INVALID_ARGUMENT);
  TteEngine* engine = reinterpret_cast<TteEngine*>(0x1);
  EXPECT_EQ(table.create_execution_context(nullptr, nullptr, &engine, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error.message, "NULL")) << error.message;
  EXPECT_EQ(g_device_count_calls, 0);
}

TEST(NativeTensorRtProvider, TestEnginePlanIsRefusedBeforeTensorRt) {
  ScopedProvider provider(&no_devices);
  TteEngine* engine = reinterpret_cast<TteEngine*>(0x1);
  TteError error{};
  EXPECT_EQ(provider.deserialize(test_engine_plan(), &engine, &error), TTE_ERROR_NOT_ACCEPTED);
  EXPECT_EQ(engine, nullptr);
  EXPECT_EQ(error.code, TTE_ERROR_NOT_ACCEPTED);
  EXPECT_TRUE(contains(error.message, "test engine")) << error.message;
  // Refused before the device count, so before any TensorRT runtime.
  EXPECT_EQ(g_device_count_calls, 0);
  EXPECT_EQ(tensorrt_log_lines(), 0u);
}

TEST(NativeTensorRtProvider, EmptyAndNullPlans) {
  ScopedProvider provider(&no_devices);
  const TteEngineProvider& table = provider.table();
  TteEngine* engine = nullptr;
  TteError error{};
  EXPECT_EQ(table.deserialize(table.user_data, "", 0, nullptr, &engine, &error),
            TTE_ERROR_NOT_ACCEPTED);
  EXPECT_TRUE(contains(error.message, "empty")) << error.message;
  EXPECT_EQ(table.deserialize(table.user_data, nullptr, 16, nullptr, &engine, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(table.deserialize(table.user_data, "x", 1, nullptr, nullptr, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(g_device_count_calls, 0);
}

TEST(NativeTensorRtProvider, WithoutADeviceTensorRtIsNeverStarted) {
  ScopedProvider provider(&no_devices);
  TteEngine* engine = nullptr;
  TteError error{};
  EXPECT_EQ(provider.deserialize(tensorrt_looking_plan(4096), &engine, &error),
            TTE_ERROR_NO_DEVICE);
  EXPECT_EQ(engine, nullptr);
  EXPECT_TRUE(contains(error.message, "no CUDA device")) << error.message;
  EXPECT_EQ(g_device_count_calls, 1);
  // TensorRT logs a CUDA initialization failure when a runtime is created
  // without a device: none here means none was created.
  EXPECT_EQ(tensorrt_log_lines(), 0u);
}

int32_t one_device() {
  ++g_device_count_calls;
  return 1;
}

// Each major's provider refuses the other's plans before anything else
// (no device count, no library): the plugin routes by the same header, so
// this is what an explicit provider choice sees.
TEST(NativeTensorRtProvider, RefusesAPlanOfAnotherMajor) {
  ScopedProvider provider(&no_devices);
  const int other = NV_TENSORRT_MAJOR == 10 ? 11 : 10;
  TteEngine* engine = nullptr;
  TteError error{};
  EXPECT_EQ(provider.deserialize(tensorrt_looking_plan(4096, other, 16, 1), &engine, &error),
            TTE_ERROR_NOT_ACCEPTED);
  EXPECT_EQ(engine, nullptr);
  const std::string message = error.message;
  const std::string o = std::to_string(other);
  EXPECT_NE(message.find("the plan was built by TensorRT " + o + ".16.1"), std::string::npos)
      << message;
  EXPECT_NE(message.find(std::string(tte::native::kProviderName) + " runs TensorRT " +
                         std::to_string(NV_TENSORRT_MAJOR) + " plans only"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("provider 'tensorrt-native-" + o + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("pip install 'tensorrt-lean-" + tte::pip_cuda_suffix() + "-libs>=" + o +
                         ".16,<"),
            std::string::npos)
      << message;
  EXPECT_EQ(g_device_count_calls, 0);
  EXPECT_EQ(tensorrt_log_lines(), 0u);
}

// With a device but no library of its major, the refusal names the version
// the plan was built by and what installs it.
TEST(NativeTensorRtProvider, NamesThePlansVersionWhenItsTensorRtIsMissing) {
  if (tte::native::TensorRtLibrary::get().found()) {
    GTEST_SKIP() << "a TensorRT " << NV_TENSORRT_MAJOR << " library is found here ("
                 << tte::native::TensorRtLibrary::get().path()
                 << "); a runtime would be created without checking the device";
  }
  ScopedProvider provider(&one_device);
  TteEngine* engine = nullptr;
  TteError error{};
  EXPECT_EQ(
      provider.deserialize(tensorrt_looking_plan(4096, NV_TENSORRT_MAJOR, 16, 1), &engine, &error),
      TTE_ERROR_NOT_ACCEPTED);
  const std::string message = error.message;
  const std::string m = std::to_string(NV_TENSORRT_MAJOR);
  EXPECT_EQ(message.rfind("the plan was built by TensorRT " + m + ".16.1, and no usable TensorRT " +
                              m + " library",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("pip install 'tensorrt-lean-" + tte::pip_cuda_suffix() + "-libs>=" + m +
                         ".16,<"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'tensorrt-" + tte::pip_cuda_suffix() + "==" + m + ".16.*'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("libnvinfer=" + m), std::string::npos) << message;
}

TEST(NativeTensorRtProvider, DescribesTheRuntimeItWouldUse) {
  ScopedProvider provider(&no_devices);
  const TteEngineProvider& table = provider.table();
  ASSERT_NE(table.describe_runtime, nullptr);
  char text[TTE_ERROR_MESSAGE_CAPACITY] = {};
  TteError error{};
  ASSERT_EQ(table.describe_runtime(table.user_data, text, sizeof(text), &error), TTE_OK)
      << error.message;
  const tte::native::TensorRtLibrary& library = tte::native::TensorRtLibrary::get();
  EXPECT_EQ(std::string(text), library.describe());
  if (library.found()) {
    EXPECT_TRUE(contains(text, library.path().c_str())) << text;
  } else {
    EXPECT_TRUE(
        contains(text, ("pip install 'tensorrt-lean-" + tte::pip_cuda_suffix() + "-libs").c_str()))
        << text;
  }
  // Describing loads at most the library: no runtime, no device query.
  EXPECT_EQ(g_device_count_calls, 0);
  EXPECT_EQ(tensorrt_log_lines(), 0u);
}

// ---- The run-time search for the TensorRT library ---------------------------

namespace fs = std::filesystem;

// A pip-like site-packages in a fresh folder: the provider's own folder is
// <site>/torch_tensorrt_executorch_runtime/lib/, the wheels' libraries go in
// <site>/tensorrt_libs/ and <site>/tensorrt_lean_libs/.
class FakeSite {
 public:
  FakeSite() {
    static int counter = 0;
    root_ = fs::temp_directory_path() /
            ("tte_fake_site_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(own_folder());
  }
  ~FakeSite() { fs::remove_all(root_); }
  FakeSite(const FakeSite&) = delete;
  FakeSite& operator=(const FakeSite&) = delete;

  fs::path own_folder() const { return root_ / "torch_tensorrt_executorch_runtime" / "lib"; }
  std::string own() const { return own_folder().string() + "/"; }
  // Copies the stand-in of `stub` to <site>/<folder>/<name>; a copy, so each
  // is a file of its own for the loader.
  std::string put(const char* stub, const std::string& folder, const std::string& name) const {
    const fs::path dir = folder.empty() ? own_folder() : root_ / folder;
    fs::create_directories(dir);
    fs::copy_file(stub, dir / name, fs::copy_options::overwrite_existing);
    return (dir / name).string();
  }

 private:
  fs::path root_;
};

const std::string kFull = "libnvinfer.so." + std::to_string(NV_TENSORRT_MAJOR);
const std::string kLean = "libnvinfer_lean.so." + std::to_string(NV_TENSORRT_MAJOR);

// "11.4.0" for 110400, as getInferLibVersion packs it.
std::string version_text(int packed) {
  return std::to_string(packed / 10000) + "." + std::to_string(packed / 100 % 100) + "." +
         std::to_string(packed % 100);
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

using tte::native::TensorRtLibrary;

TEST(NativeTensorRtLibrary, DecodesVersionsAsTensorRtPacksThem) {
  const auto v = tte::native::decode_tensorrt_version(110402);
  EXPECT_EQ(v.major, 11);
  EXPECT_EQ(v.minor, 4);
  EXPECT_EQ(v.patch, 2);
  EXPECT_EQ(v.text(), "11.4.2");
  const auto built = tte::native::header_version();
  EXPECT_EQ(tte::native::version_mismatch(built, built), "");
  EXPECT_EQ(tte::native::version_mismatch({built.major, built.minor + 3, 0}, built), "");
  EXPECT_NE(tte::native::version_mismatch({built.major - 1, 16, 1}, built).find("major"),
            std::string::npos);
}

TEST(NativeTensorRtLibrary, PrefersThePipFullRuntimeThenLean) {
  FakeSite site;
  site.put(TTE_FAKE_NVINFER_NEWER, "tensorrt_lean_libs", kLean);
  const std::string full = site.put(TTE_FAKE_NVINFER_HEADER, "tensorrt_libs", kFull);
  const TensorRtLibrary library = TensorRtLibrary::search("", site.own(), "", false);
  ASSERT_TRUE(library.found()) << library.why_not_found();
  EXPECT_EQ(fs::canonical(library.path()), fs::canonical(full));
  EXPECT_FALSE(library.lean());
  EXPECT_EQ(library.version().text(), version_text(TTE_FAKE_VERSION_HEADER));
  EXPECT_TRUE(contains(library.describe().c_str(),
                       ("TensorRT " + version_text(TTE_FAKE_VERSION_HEADER) + " from").c_str()))
      << library.describe();
}

TEST(NativeTensorRtLibrary, TakesTheLeanRuntimeWhenItIsTheOnlyOne) {
  FakeSite site;
  site.put(TTE_FAKE_NVINFER_NEWER, "tensorrt_lean_libs", kLean);
  const TensorRtLibrary library = TensorRtLibrary::search("", site.own(), "", false);
  ASSERT_TRUE(library.found()) << library.why_not_found();
  EXPECT_TRUE(ends_with(library.path(), "tensorrt_lean_libs/" + kLean)) << library.path();
  EXPECT_TRUE(library.lean());
  EXPECT_TRUE(contains(library.describe().c_str(), "lean runtime")) << library.describe();
}

TEST(NativeTensorRtLibrary, FindsTheLibraryBesideItselfInACondaPrefix) {
  FakeSite site;
  site.put(TTE_FAKE_NVINFER_NEWER, "", kFull);
  const TensorRtLibrary library = TensorRtLibrary::search("", site.own(), "", false);
  ASSERT_TRUE(library.found()) << library.why_not_found();
  EXPECT_EQ(library.path(), site.own() + kFull);
}

// The wheel pip-installed into a conda environment: the environment's lib/,
// full then lean, after the wheels' folders and the provider's own, and
// named in the message when nothing is found.
TEST(NativeTensorRtLibrary, LooksInTheCondaEnvironmentOfAPipInstall) {
  FakeSite site;
  FakeSite env;
  const std::string prefix = env.own_folder().parent_path().parent_path().string();
  const TensorRtLibrary none = TensorRtLibrary::search("", site.own(), prefix, false);
  EXPECT_FALSE(none.found());
  EXPECT_TRUE(contains(none.why_not_found().c_str(), (prefix + "/lib/").c_str()))
      << none.why_not_found();

  const std::string lean = env.put(TTE_FAKE_NVINFER_NEWER, "lib", kLean);
  const TensorRtLibrary found_lean = TensorRtLibrary::search("", site.own(), prefix, false);
  ASSERT_TRUE(found_lean.found()) << found_lean.why_not_found();
  EXPECT_EQ(fs::canonical(found_lean.path()), fs::canonical(lean));
  EXPECT_TRUE(found_lean.lean());

  const std::string full = env.put(TTE_FAKE_NVINFER_HEADER, "lib", kFull);
  const TensorRtLibrary found_full = TensorRtLibrary::search("", site.own(), prefix, false);
  ASSERT_TRUE(found_full.found()) << found_full.why_not_found();
  EXPECT_EQ(fs::canonical(found_full.path()), fs::canonical(full));

  // The pip wheels come first.
  const std::string pip = site.put(TTE_FAKE_NVINFER_NEWER, "tensorrt_lean_libs", kLean);
  const TensorRtLibrary found_pip = TensorRtLibrary::search("", site.own(), prefix, false);
  ASSERT_TRUE(found_pip.found()) << found_pip.why_not_found();
  EXPECT_EQ(fs::canonical(found_pip.path()), fs::canonical(pip));
}

// TensorRT 10's and 11's classes have other layouts: a provider built with
// one major's headers must never hand the other's library a logger.
TEST(NativeTensorRtLibrary, RefusesAnotherMajorAndGoesOn) {
  FakeSite site;
  site.put(TTE_FAKE_NVINFER_OTHER_MAJOR, "tensorrt_libs", kFull);
  site.put(TTE_FAKE_NVINFER_NEWER, "tensorrt_lean_libs", kLean);
  const TensorRtLibrary library = TensorRtLibrary::search("", site.own(), "", false);
  ASSERT_TRUE(library.found()) << library.why_not_found();
  EXPECT_TRUE(library.lean());
  EXPECT_EQ(library.version().text(), version_text(TTE_FAKE_VERSION_NEWER));

  FakeSite only_old;
  only_old.put(TTE_FAKE_NVINFER_OTHER_MAJOR, "tensorrt_libs", kFull);
  const TensorRtLibrary none = TensorRtLibrary::search("", only_old.own(), "", false);
  EXPECT_FALSE(none.found());
  const std::string expected = "it is TensorRT " + version_text(TTE_FAKE_VERSION_OTHER_MAJOR) +
                               ", and this provider needs TensorRT " +
                               std::to_string(NV_TENSORRT_MAJOR);
  EXPECT_TRUE(contains(none.why_not_found().c_str(), expected.c_str())) << none.why_not_found();
}

// Classes gain virtual functions in minor releases: a library older than
// the headers would be called past the end of its vtables.
TEST(NativeTensorRtLibrary, RefusesAnOlderMinorThanTheHeaders) {
  FakeSite site;
  site.put(TTE_FAKE_NVINFER_OLDER, "tensorrt_libs", kFull);
  const TensorRtLibrary library = TensorRtLibrary::search("", site.own(), "", false);
  EXPECT_FALSE(library.found());
  EXPECT_TRUE(contains(library.why_not_found().c_str(), "older than the TensorRT"))
      << library.why_not_found();
}

TEST(NativeTensorRtLibrary, AnOverrideIsTheOnlyPlaceLooked) {
  FakeSite site;
  site.put(TTE_FAKE_NVINFER_HEADER, "tensorrt_libs", kFull);
  const std::string chosen = site.put(TTE_FAKE_NVINFER_NEWER, "elsewhere", "libnvinfer_custom.so");
  const TensorRtLibrary library = TensorRtLibrary::search(chosen, site.own(), "", false);
  ASSERT_TRUE(library.found()) << library.why_not_found();
  EXPECT_EQ(library.path(), chosen);

  const TensorRtLibrary missing =
      TensorRtLibrary::search(site.own() + "nothing.so", site.own(), "", false);
  EXPECT_FALSE(missing.found());
  EXPECT_TRUE(contains(missing.why_not_found().c_str(), "does not exist"))
      << missing.why_not_found();
  EXPECT_TRUE(contains(missing.why_not_found().c_str(), tte::kTensorRtLibraryEnv));
}

TEST(NativeTensorRtLibrary, SaysWhereItLookedAndWhatToInstall) {
  FakeSite site;
  const TensorRtLibrary library = TensorRtLibrary::search("", site.own(), "", false);
  EXPECT_FALSE(library.found());
  const std::string why = library.describe();
  EXPECT_TRUE(contains(why.c_str(), "tensorrt_libs/")) << why;
  EXPECT_TRUE(contains(why.c_str(), "tensorrt_lean_libs/")) << why;
  EXPECT_TRUE(contains(why.c_str(), kLean.c_str())) << why;
  // This major's packages, at least the headers' minor.
  const std::string pin = "pip install 'tensorrt-lean-" + tte::pip_cuda_suffix() +
                          "-libs>=" + std::to_string(NV_TENSORRT_MAJOR) + "." +
                          std::to_string(NV_TENSORRT_MINOR) + ",<" +
                          std::to_string(NV_TENSORRT_MAJOR + 1) + "'";
  EXPECT_TRUE(contains(why.c_str(), pin.c_str())) << why;
  EXPECT_TRUE(contains(why.c_str(), tte::tensorrt_library_env(NV_TENSORRT_MAJOR).c_str())) << why;
  EXPECT_EQ(why.rfind(library.why_not_found(), 0), 0u) << why;
}

TEST(NativeTensorRtLibrary, AFileThatIsNotTensorRtIsSkipped) {
  FakeSite site;
  // A library without TensorRT's symbols where libnvinfer should be.
  site.put(TTE_FAKE_NVINFER_HEADER, "tensorrt_libs", kFull);
  fs::resize_file(site.own_folder().parent_path().parent_path() / "tensorrt_libs" / kFull, 16);
  site.put(TTE_FAKE_NVINFER_NEWER, "tensorrt_lean_libs", kLean);
  const TensorRtLibrary library = TensorRtLibrary::search("", site.own(), "", false);
  ASSERT_TRUE(library.found()) << library.why_not_found();
  EXPECT_TRUE(library.lean());
}

// A plan of a later minor than the loaded library is refused before
// TensorRT sees it, from the library's own version; the same or an older
// minor (version-compatible plans run on later releases) goes to TensorRT.
TEST(NativeTensorRtProvider, APlanNewerThanTheLibraryIsRefusedByVersion) {
  const int m = NV_TENSORRT_MAJOR;
  const tte::native::TensorRtVersion library{m, 16, 1};
  auto header = [](int major, int minor, int patch) {
    const std::vector<uint8_t> plan = tensorrt_looking_plan(64, major, minor, patch);
    return tte::read_plan_header(plan.data(), plan.size());
  };
  const std::string refusal = tte::native::newer_plan_refusal(header(m, 17, 0), library);
  const std::string mm = std::to_string(m);
  EXPECT_EQ(refusal.rfind("the plan was built by TensorRT " + mm +
                              ".17.0, newer than the TensorRT " + mm + ".16.1 found",
                          0),
            0u)
      << refusal;
  EXPECT_NE(refusal.find("'tensorrt-" + tte::pip_cuda_suffix() + "==" + mm + ".17.*'"),
            std::string::npos)
      << refusal;
  EXPECT_EQ(tte::native::newer_plan_refusal(header(m, 16, 9), library), "");
  EXPECT_EQ(tte::native::newer_plan_refusal(header(m, 3, 0), library), "");
  // Another major's plan is not this check's to refuse.
  EXPECT_EQ(tte::native::newer_plan_refusal(header(m + 1, 17, 0), library), "");
  EXPECT_EQ(tte::native::newer_plan_refusal(tte::PlanHeader{}, library), "");
}

// A real lean runtime of this major, when the test is pointed at one
// (TTE_TEST_TENSORRT<major>_LEAN_LIBRARY; scripts/gpu-check.sh sets it):
// loads without a GPU; no runtime is created.
TEST(NativeTensorRtLibrary, LoadsARealLeanRuntime) {
  const std::string variable =
      "TTE_TEST_TENSORRT" + std::to_string(NV_TENSORRT_MAJOR) + "_LEAN_LIBRARY";
  const char* lean = std::getenv(variable.c_str());
  if (lean == nullptr || *lean == '\0') GTEST_SKIP() << variable << " is not set";
  const TensorRtLibrary library = TensorRtLibrary::search(lean, "", "", false);
  ASSERT_TRUE(library.found()) << library.why_not_found();
  EXPECT_TRUE(library.lean());
  EXPECT_EQ(library.version().major, NV_TENSORRT_MAJOR);
  std::printf("%s\n", library.describe().c_str());
}

TEST(NativeTensorRtProvider, DataTypesMapToExecuTorchScalarTypes) {
  using tte::native::scalar_type_of;
  using ScalarType = executorch::runtime::etensor::ScalarType;
  auto value = [](ScalarType type) { return static_cast<int32_t>(type); };
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kFLOAT), value(ScalarType::Float));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kHALF), value(ScalarType::Half));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kBF16), value(ScalarType::BFloat16));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kINT8), value(ScalarType::Char));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kUINT8), value(ScalarType::Byte));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kINT32), value(ScalarType::Int));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kINT64), value(ScalarType::Long));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kBOOL), value(ScalarType::Bool));
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kFP8), 24);  // Float8_e4m3fn
  EXPECT_EQ(scalar_type_of(nvinfer1::DataType::kINT4), -1);
  EXPECT_STREQ(tte::native::data_type_name(nvinfer1::DataType::kINT4), "kINT4");
}

TEST(NativeTensorRtProvider, PlanHeaderNamesTheBuildingVersion) {
  const std::vector<uint8_t> plan = tensorrt_looking_plan(64);
  const tte::PlanHeader header = tte::read_plan_header(plan.data(), plan.size());
  EXPECT_TRUE(header.has_tag);
  ASSERT_TRUE(header.has_version);
  EXPECT_EQ(header.version[0], NV_TENSORRT_MAJOR);
  EXPECT_EQ(header.version[1], NV_TENSORRT_MINOR);
  const std::string hint = tte::native::refusal_hint(header, "99.0.0", false);
  EXPECT_NE(hint.find("TensorRT " + std::string(tte::native::tensorrt_header_version())),
            std::string::npos)
      << hint;

  const std::vector<uint8_t> truncated(plan.begin(), plan.begin() + 8);
  EXPECT_TRUE(tte::read_plan_header(truncated.data(), truncated.size()).has_tag);
  EXPECT_FALSE(tte::read_plan_header(truncated.data(), truncated.size()).has_version);
  const std::vector<uint8_t> other = bytes_of("not a plan at all, just text");
  const tte::PlanHeader none = tte::read_plan_header(other.data(), other.size());
  EXPECT_FALSE(none.has_tag);
  EXPECT_NE(tte::native::refusal_hint(none, "11.4.0", true).find("not a TensorRT plan"),
            std::string::npos);
}

class NativeTensorRtProviderGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (real_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device: the TensorRT runtime cases need a GPU";
    }
    if (!tte::native::TensorRtLibrary::get().found()) {
      GTEST_SKIP() << tte::native::TensorRtLibrary::get().why_not_found();
    }
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
};

TEST_F(NativeTensorRtProviderGpu, CreatesOneRuntimePerDevice) {
  const ProviderEnvironment environment{&real_device_count, &log_everything, &capture_log};
  tte::native::RuntimePool pool(environment);
  std::shared_ptr<tte::native::DeviceRuntime> first;
  std::shared_ptr<tte::native::DeviceRuntime> second;
  const tte::Status created = pool.acquire(0, &first);
  ASSERT_TRUE(created.ok()) << created.message();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(first->runtime, nullptr);
  EXPECT_EQ(first->device, 0);
  ASSERT_TRUE(pool.acquire(0, &second).ok());
  EXPECT_EQ(first.get(), second.get());
  // Version-compatible plans need host code allowed (NvInferRuntime.h:2139,
  // "The default value is false"), on the full runtime too.
  ASSERT_TRUE(first->apply(tte::native::RuntimeSettings{}).ok());
  EXPECT_TRUE(first->runtime->getEngineHostCodeAllowed());
  tte::native::RuntimeSettings refuse;
  refuse.host_code_allowed = false;
  ASSERT_TRUE(first->apply(refuse).ok());
  EXPECT_FALSE(first->runtime->getEngineHostCodeAllowed());
  tte::native::RuntimeSettings dla;
  dla.dla_core = first->runtime->getNbDLACores();
  const tte::Status no_core = first->apply(dla);
  EXPECT_EQ(no_core.code(), TTE_ERROR_INVALID_ARGUMENT) << no_core.message();
  std::shared_ptr<tte::native::DeviceRuntime> missing;
  const tte::Status past_end = pool.acquire(real_device_count(), &missing);
  EXPECT_EQ(past_end.code(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(missing, nullptr);
  EXPECT_NE(past_end.message().find("does not exist"), std::string::npos) << past_end.message();
}

TEST_F(NativeTensorRtProviderGpu, UnreadablePlansFailCleanly) {
  ScopedProvider provider(&real_device_count);
  const std::vector<uint8_t> full = tensorrt_looking_plan(64 * 1024);
  const std::vector<std::vector<uint8_t>> plans = {
      full,
      std::vector<uint8_t>(full.begin(), full.begin() + 28),    // header only
      std::vector<uint8_t>(full.begin(), full.begin() + 4096),  // truncated
      bytes_of("definitely not a TensorRT plan"),
      {0x00},
  };
  // Twice over, so a failure that left the runtime in a bad state shows.
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < plans.size(); ++i) {
      TteEngine* engine = nullptr;
      TteError error{};
      const TteStatus status = provider.deserialize(plans[i], &engine, &error);
      EXPECT_EQ(status, TTE_ERROR_NOT_ACCEPTED) << "plan " << i << ": " << error.message;
      EXPECT_EQ(engine, nullptr);
      EXPECT_EQ(error.code, status);
      EXPECT_TRUE(contains(error.message, "could not deserialize")) << error.message;
      std::printf("plan %zu (%zu bytes): %s\n", i, plans[i].size(), error.message);
    }
  }
  // The provider still answers the plans it never hands to TensorRT.
  TteEngine* engine = nullptr;
  TteError error{};
  EXPECT_EQ(provider.deserialize(test_engine_plan(), &engine, &error), TTE_ERROR_NOT_ACCEPTED);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(NativeTensorRtProviderGpu, DeviceOutOfRangeIsAnInvalidArgument) {
  ScopedProvider provider(&real_device_count);
  TteEngine* engine = nullptr;
  TteError error{};
  EXPECT_EQ(provider.deserialize(tensorrt_looking_plan(64), &engine, &error, real_device_count()),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error.message, "does not exist")) << error.message;
}

// TensorRT's error lines: the one a capture collects for its call's failure
// message (tensorrt_reason) is logged at info, not before the error that
// carries it; one outside any capture stays at error. No TensorRT needed:
// the logger is called as TensorRT calls it.
TEST(NativeTensorRtLogger, ErrorsACallCollectsAreLoggedAtInfo) {
  using Severity = nvinfer1::ILogger::Severity;
  tte::native::TensorRtLogger logger({&no_devices, &log_everything, &capture_log});
  {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log.clear();
  }
  {
    const tte::native::TensorRtErrorCapture capture;
    logger.log(Severity::kERROR, "collected");
  }
  EXPECT_EQ(tte::native::tensorrt_reason(), " (TensorRT: collected)");
  logger.log(Severity::kERROR, "not collected");
  // An internal error ("execution is unrecoverable") is an error, captured or not.
  {
    const tte::native::TensorRtErrorCapture capture;
    logger.log(Severity::kINTERNAL_ERROR, "internal");
  }
  EXPECT_EQ(tte::native::tensorrt_reason(), " (TensorRT: internal)");
  std::lock_guard<std::mutex> lock(g_log_mutex);
  ASSERT_EQ(g_log.size(), 3u);
  EXPECT_EQ(g_log[0].level, TTE_LOG_INFO);
  EXPECT_EQ(g_log[0].text, "TensorRT: collected");
  EXPECT_EQ(g_log[1].level, TTE_LOG_ERROR);
  EXPECT_EQ(g_log[1].text, "TensorRT: not collected");
  EXPECT_EQ(g_log[2].level, TTE_LOG_ERROR);
  EXPECT_EQ(g_log[2].text, "TensorRT: internal");
}

// The execution context's error recorder: TensorRT's own text of a failed
// enqueue comes from the context that failed (copied: TensorRT frees desc
// after reportError), not from whatever this thread logged last; a bounded
// number kept; never fatal.
TEST(NativeErrorRecorder, KeepsTheContextsErrorsForTheFailedCall) {
  tte::native::ContextErrorRecorder recorder;
  EXPECT_EQ(recorder.incRefCount(), 1);
  std::string desc = "input 'x' has no address";
  EXPECT_FALSE(recorder.reportError(nvinfer1::ErrorCode::kINVALID_STATE, desc.c_str()));
  desc.assign("overwritten");
  EXPECT_EQ(recorder.getNbErrors(), 1);
  EXPECT_EQ(recorder.getErrorCode(0), nvinfer1::ErrorCode::kINVALID_STATE);
  EXPECT_STREQ(recorder.getErrorDesc(0), "input 'x' has no address");
  EXPECT_EQ(tte::native::enqueue_failure_message(recorder.text(), "an unrelated logged line"),
            " (TensorRT: input 'x' has no address)");
  for (int i = 0; i < tte::native::ContextErrorRecorder::kCapacity + 2; ++i) {
    recorder.reportError(nvinfer1::ErrorCode::kINTERNAL_ERROR, "again");
  }
  EXPECT_TRUE(recorder.hasOverflowed());
  EXPECT_EQ(recorder.getNbErrors(), tte::native::ContextErrorRecorder::kCapacity);
  recorder.clear();
  EXPECT_EQ(recorder.getNbErrors(), 0);
  EXPECT_FALSE(recorder.hasOverflowed());
  EXPECT_EQ(tte::native::enqueue_failure_message(recorder.text(), "logged"), " (TensorRT: logged)");
  EXPECT_EQ(tte::native::enqueue_failure_message(recorder.text(), ""), "");
  EXPECT_EQ(recorder.decRefCount(), 0);
}

}  // namespace
