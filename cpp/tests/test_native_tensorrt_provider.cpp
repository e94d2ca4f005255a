// The native TensorRT provider, compiled from its sources and linked against
// the TensorRT library found at configure time (libnvinfer, or
// libnvinfer_lean with TTE_TENSORRT_LEAN_ONLY), without the rest of the
// plugin. The first group runs anywhere and shows that nothing reaches
// TensorRT before it should; the GPU group skips without a CUDA device and
// checks runtime creation and that plans TensorRT cannot read fail cleanly.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <executorch/runtime/core/portable_type/scalar_type.h>

#include "native/data_types.h"
#include "native/plan_header.h"
#include "native/runtime_pool.h"
#include "native/native_tensorrt_provider.h"
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
std::vector<uint8_t> tensorrt_looking_plan(size_t size) {
  std::vector<uint8_t> plan(size);
  std::mt19937 noise(20240611);
  for (uint8_t& byte : plan) {
    byte = static_cast<uint8_t>(noise());
  }
  const uint8_t header[] = {'f', 't', 'r', 't', 0, 0, 0, 0};
  std::memcpy(plan.data(), header, sizeof(header));
  plan[24] = NV_TENSORRT_MAJOR;
  plan[25] = NV_TENSORRT_MINOR;
  plan[26] = NV_TENSORRT_PATCH;
  plan[27] = 0;
  return plan;
}

bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

TEST(NativeTensorRtProvider, DescribesItself) {
  ScopedProvider provider(&no_devices);
  const TteEngineProvider& table = provider.table();
  EXPECT_EQ(table.abi_version, TTE_ENGINE_PROVIDER_ABI_VERSION);
  EXPECT_EQ(table.struct_size, sizeof(TteEngineProvider));
  EXPECT_STREQ(table.name, "tensorrt-native");
  EXPECT_EQ(table.memory_kind, TTE_MEMORY_DEVICE);
  EXPECT_EQ(table.enqueue_capturable, 1);
  EXPECT_NE(table.release, nullptr);
  // Building the table starts nothing.
  EXPECT_EQ(g_device_count_calls, 0);
  EXPECT_EQ(tensorrt_log_lines(), 0u);
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

TEST(NativeTensorRtProvider, LoadedLibraryMatchesTheHeadersMajorVersion) {
  const std::string header = tte::native::tensorrt_header_version();
  const std::string library = tte::native::tensorrt_library_version();
  EXPECT_EQ(header.rfind(std::to_string(NV_TENSORRT_MAJOR) + ".", 0), 0u) << header;
  EXPECT_EQ(library.rfind(std::to_string(NV_TENSORRT_MAJOR) + ".", 0), 0u)
      << "headers " << header << ", library " << library;
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
  const tte::native::PlanHeader header = tte::native::read_plan_header(plan.data(), plan.size());
  EXPECT_TRUE(header.has_tag);
  ASSERT_TRUE(header.has_version);
  EXPECT_EQ(header.version[0], NV_TENSORRT_MAJOR);
  EXPECT_EQ(header.version[1], NV_TENSORRT_MINOR);
  const std::string hint = tte::native::refusal_hint(header, "99.0.0");
  EXPECT_NE(hint.find("TensorRT " + std::string(tte::native::tensorrt_header_version())),
            std::string::npos)
      << hint;

  const std::vector<uint8_t> truncated(plan.begin(), plan.begin() + 8);
  EXPECT_TRUE(tte::native::read_plan_header(truncated.data(), truncated.size()).has_tag);
  EXPECT_FALSE(tte::native::read_plan_header(truncated.data(), truncated.size()).has_version);
  const std::vector<uint8_t> other = bytes_of("not a plan at all, just text");
  const tte::native::PlanHeader none = tte::native::read_plan_header(other.data(), other.size());
  EXPECT_FALSE(none.has_tag);
  EXPECT_NE(tte::native::refusal_hint(none, "11.4.0").find("not a TensorRT plan"),
            std::string::npos);
}

class NativeTensorRtProviderGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (real_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device: the TensorRT runtime cases need a GPU";
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
#if defined(TTE_TENSORRT_LEAN_ONLY)
  EXPECT_TRUE(first->runtime->getEngineHostCodeAllowed());
#endif
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

}  // namespace
