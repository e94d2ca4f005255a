// Every function c_api.h exports runs its body at the C boundary
// (cpp/src/c_api/c_boundary.h): run with the boundary's test hook on
// (TORCH_TENSORRT_EXECUTORCH_TEST_C_BOUNDARY_THROW=1, which ctest sets), each
// body throws, and each function must answer with its failure value, never
// let the exception out (the process would end in std::terminate). The test
// calls every function the header declares and checks it missed none.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "c_api/c_boundary.h"
#include "torch_tensorrt_executorch/c_api.h"

namespace {

std::set<std::string>& called() {
  static std::set<std::string> names;
  return names;
}

// A TteStatus function failed as the hook makes it fail, naming itself.
void expect_failed(const char* function, TteStatus status, const TteError& error) {
  called().insert(function);
  EXPECT_EQ(status, TTE_ERROR_INTERNAL) << function;
  EXPECT_EQ(error.code, TTE_ERROR_INTERNAL) << function;
  EXPECT_EQ(std::string(error.message),
            std::string(function) + " failed: " + tte::c_boundary::kTestThrowWhat);
}

template <typename T>
void expect_fallback(const char* function, T value, T fallback) {
  called().insert(function);
  EXPECT_EQ(value, fallback) << function;
}

void expect_empty(const char* function, const char* text) {
  called().insert(function);
  ASSERT_NE(text, nullptr) << function;
  EXPECT_STREQ(text, "") << function;
}

void returned(const char* function) { called().insert(function); }

// The functions c_api.h declares ("TTE_API <type> tte_name(").
std::set<std::string> declared() {
  std::ifstream header(std::string(TTE_SOURCE_DIR) +
                       "/cpp/include/torch_tensorrt_executorch/c_api.h");
  std::stringstream text;
  text << header.rdbuf();
  const std::string source = text.str();
  const std::regex declaration(R"(TTE_API\s+[\w\s\*]+?\b(tte_\w+)\s*\()");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), declaration);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

}  // namespace

TEST(CBoundary, EveryExportedFunctionAnswersAThrowInItsBody) {
  ASSERT_TRUE(tte::c_boundary::throw_for_test())
      << "set " << tte::c_boundary::kTestThrowEnv << "=1 (ctest does)";
  TteError error{};
  const char data[] = "not a program";
  char* text = nullptr;

  // The plugin.
  expect_fallback("tte_c_api_version", tte_c_api_version(), 0u);
  expect_empty("tte_version", tte_version());
  expect_empty("tte_executorch_version", tte_executorch_version());
  expect_fallback("tte_owns_backend_registration", tte_owns_backend_registration(), 0);
  error = {};
  expect_failed("tte_registration_status", tte_registration_status(&error), error);
  expect_fallback("tte_registration_owner_path", tte_registration_owner_path(),
                  static_cast<const char*>(nullptr));
  expect_empty("tte_library_path", tte_library_path());
  tte_set_log_level(TTE_LOG_DEBUG);
  returned("tte_set_log_level");
  expect_fallback("tte_get_log_level", tte_get_log_level(),
                  static_cast<TteLogLevel>(TTE_LOG_WARNING));
  expect_fallback("tte_cuda_device_count", tte_cuda_device_count(), 0);
  expect_empty("tte_cuda_unavailable_reason", tte_cuda_unavailable_reason());
  expect_empty("tte_cuda_allocator_owner", tte_cuda_allocator_owner());
  tte_free_string(nullptr);
  returned("tte_free_string");

  // Engine providers.
  TteEngineProvider provider{};
  error = {};
  expect_failed("tte_register_engine_provider",
                tte_register_engine_provider(&provider, TTE_PROVIDER_OTHER, &error), error);
  error = {};
  expect_failed("tte_unregister_engine_provider", tte_unregister_engine_provider("x", &error),
                error);
  expect_fallback("tte_num_engine_providers", tte_num_engine_providers(), size_t{0});
  expect_fallback("tte_engine_provider_name", tte_engine_provider_name(0),
                  static_cast<const char*>(nullptr));
  error = {};
  expect_failed("tte_load_engine_provider_library",
                tte_load_engine_provider_library("/nonexistent.so", TTE_PROVIDER_OTHER, &error),
                error);
  error = {};
  expect_failed("tte_engine_provider_runtime", tte_engine_provider_runtime("x", &text, &error),
                error);

  // The blob reader and the caller stream.
  error = {};
  expect_failed("tte_blob_describe_json", tte_blob_describe_json(data, sizeof(data), &text, &error),
                error);
  tte_set_thread_stream(nullptr);
  returned("tte_set_thread_stream");
  tte_clear_thread_stream();
  returned("tte_clear_thread_stream");
  void* stream = nullptr;
  expect_fallback("tte_get_thread_stream", tte_get_thread_stream(&stream), 0);

  // Programs and method handles: no program opens, so the handle calls get
  // NULL, which their bodies would refuse as an invalid argument; the hook
  // throws first.
  expect_fallback("tte_num_load_options", tte_num_load_options(), size_t{0});
  TteLoadOptionInfo option{};
  option.struct_size = sizeof(option);
  error = {};
  expect_failed("tte_load_option_info", tte_load_option_info(0, &option, &error), error);
  EXPECT_EQ(option.name, nullptr);
  TteProgram* program = nullptr;
  error = {};
  expect_failed("tte_program_open_file", tte_program_open_file("x.pte", nullptr, &program, &error),
                error);
  error = {};
  expect_failed("tte_program_open_buffer",
                tte_program_open_buffer(data, sizeof(data), nullptr, &program, &error), error);
  EXPECT_EQ(program, nullptr);
  tte_program_close(nullptr);
  returned("tte_program_close");
  expect_empty("tte_program_last_error", tte_program_last_error(nullptr));
  size_t count = 0;
  size_t outputs = 0;
  const char* name = nullptr;
  TteValueInfo info{};
  error = {};
  expect_failed("tte_program_num_methods", tte_program_num_methods(nullptr, &count, &error), error);
  error = {};
  expect_failed("tte_program_method_name", tte_program_method_name(nullptr, 0, &name, &error),
                error);
  error = {};
  expect_failed("tte_program_load_method", tte_program_load_method(nullptr, "forward", &error),
                error);
  error = {};
  expect_failed("tte_program_method_io_count",
                tte_program_method_io_count(nullptr, "forward", &count, &outputs, &error), error);
  error = {};
  expect_failed("tte_program_input_info",
                tte_program_input_info(nullptr, "forward", 0, &info, &error), error);
  error = {};
  expect_failed("tte_program_output_info",
                tte_program_output_info(nullptr, "forward", 0, &info, &error), error);
  error = {};
  expect_failed("tte_program_describe_json", tte_program_describe_json(nullptr, &text, &error),
                error);
  error = {};
  expect_failed("tte_program_run",
                tte_program_run(nullptr, "forward", nullptr, 0, 0, nullptr, 0, &error), error);
  error = {};
  expect_failed("tte_program_write_etdump", tte_program_write_etdump(nullptr, "x.etdp", &error),
                error);
  TteMethod* method = nullptr;
  error = {};
  expect_failed("tte_program_get_method",
                tte_program_get_method(nullptr, "forward", &method, &error), error);
  tte_method_release(nullptr);
  returned("tte_method_release");
  error = {};
  expect_failed("tte_method_io_count", tte_method_io_count(nullptr, &count, &outputs, &error),
                error);
  error = {};
  expect_failed("tte_method_run", tte_method_run(nullptr, nullptr, 0, nullptr, nullptr, 0, &error),
                error);

  // Runtime statistics: nothing is written into the caller's struct.
  TteRuntimeStats stats{};
  stats.struct_size = sizeof(stats);
  stats.enqueues = 12345;
  tte_get_runtime_stats(&stats);
  returned("tte_get_runtime_stats");
  EXPECT_EQ(stats.enqueues, 12345u);
  tte_reset_runtime_stats();
  returned("tte_reset_runtime_stats");

  // None missed: a function added to c_api.h must be added here.
  const std::set<std::string> all = declared();
  ASSERT_GE(all.size(), 40u);
  for (const std::string& function : all) {
    EXPECT_TRUE(called().count(function))
        << function << " is declared in c_api.h but not called here";
  }
  for (const std::string& function : called()) {
    EXPECT_TRUE(all.count(function)) << function << " is called here but not declared in c_api.h";
  }
}
