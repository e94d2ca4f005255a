// The engine-provider registry through the C API: selection order, refusals
// (duplicates, ABI mismatches), provider lifetime across unregister, and
// loading provider libraries.
#include <string>
#include <vector>

#include "delegate_harness.h"

namespace tte_test {
namespace {

std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  for (size_t i = 0; i < tte_num_engine_providers(); ++i)
    names.push_back(tte_engine_provider_name(i));
  return names;
}

TEST(ProviderRegistry, OrdersByKindThenRegistration) {
  FakeProvider other_first("other-first", TTE_MEMORY_HOST, TTE_PROVIDER_OTHER);
  FakeProvider python("python", TTE_MEMORY_HOST, TTE_PROVIDER_PYTHON);
  FakeProvider native("native", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  FakeProvider other_second("other-second", TTE_MEMORY_HOST, TTE_PROVIDER_OTHER);
  FakeProvider native_second("native-second", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  EXPECT_EQ(registered_names(), (std::vector<std::string>{"native", "native-second", "python",
                                                          "other-first", "other-second"}));
  EXPECT_EQ(tte_engine_provider_name(5), nullptr);
  python.unregister();
  EXPECT_EQ(registered_names(),
            (std::vector<std::string>{"native", "native-second", "other-first", "other-second"}));
}

TEST(ProviderRegistry, RefusesADuplicateName) {
  FakeProvider first("dup");
  ASSERT_EQ(first.status(), TTE_OK);
  FakeProvider second("dup");
  EXPECT_EQ(second.status(), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(second.message().find("'dup' is already registered"), std::string::npos)
      << second.message();
  EXPECT_EQ(registered_names(), std::vector<std::string>{"dup"});
}

TEST(ProviderRegistry, CopiesTheStructAndTheName) {
  FakeProviderState state;
  std::string name = "copied";
  state.name = name;
  TteEngineProvider abi = fake_provider_abi(&state);
  std::vector<char> name_buffer(name.begin(), name.end());
  name_buffer.push_back('\0');
  abi.name = name_buffer.data();
  ASSERT_EQ(tte_register_engine_provider(&abi, TTE_PROVIDER_OTHER, nullptr), TTE_OK);
  name_buffer[0] = 'X';
  abi.name = "changed";
  EXPECT_EQ(registered_names(), std::vector<std::string>{"copied"});
  EXPECT_EQ(tte_unregister_engine_provider("copied", nullptr), TTE_OK);
  EXPECT_EQ(state.releases.load(), 1);
}

TEST(ProviderRegistry, ChecksTheAbi) {
  FakeProviderState state;
  state.name = "abi";
  struct Case {
    const char* what;
    void (*breakit)(TteEngineProvider*);
    const char* expected;
  } cases[] = {
      {"future ABI",
       [](TteEngineProvider* p) { p->abi_version = TTE_ENGINE_PROVIDER_ABI_VERSION + 1; },
       "ABI version 3"},
      {"ABI 0", [](TteEngineProvider* p) { p->abi_version = 0; }, "ABI version 0"},
      {"short struct", [](TteEngineProvider* p) { p->struct_size = 16; }, "struct_size 16"},
      {"no name", [](TteEngineProvider* p) { p->name = nullptr; }, "has no name"},
      {"empty name", [](TteEngineProvider* p) { p->name = ""; }, "has no name"},
      {"memory kind", [](TteEngineProvider* p) { p->memory_kind = 7; }, "memory_kind 7"},
      {"no enqueue", [](TteEngineProvider* p) { p->enqueue = nullptr; }, "no enqueue function"},
      {"no destroy", [](TteEngineProvider* p) { p->destroy = nullptr; }, "no destroy function"},
  };
  for (const Case& c : cases) {
    TteEngineProvider abi = fake_provider_abi(&state);
    c.breakit(&abi);
    TteError error{};
    EXPECT_EQ(tte_register_engine_provider(&abi, TTE_PROVIDER_OTHER, &error),
              TTE_ERROR_INVALID_ARGUMENT)
        << c.what;
    EXPECT_NE(std::string(error.message).find(c.expected), std::string::npos)
        << c.what << ": " << error.message;
    EXPECT_EQ(error.code, TTE_ERROR_INVALID_ARGUMENT);
  }
  TteEngineProvider abi = fake_provider_abi(&state);
  TteError error{};
  EXPECT_EQ(tte_register_engine_provider(&abi, 9, &error), TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("unknown provider kind 9"), std::string::npos);
  EXPECT_EQ(tte_register_engine_provider(nullptr, TTE_PROVIDER_OTHER, nullptr),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tte_num_engine_providers(), 0u);
  EXPECT_EQ(state.releases.load(), 0) << "a refused provider is not the registry's to release";
}

TEST(ProviderRegistry, AcceptsALargerStructFromANewerHeader) {
  FakeProviderState state;
  state.name = "newer";
  struct Newer {
    TteEngineProvider v1;
    void* appended_field;
  } newer{fake_provider_abi(&state), nullptr};
  newer.v1.struct_size = sizeof(Newer);
  EXPECT_EQ(tte_register_engine_provider(&newer.v1, TTE_PROVIDER_OTHER, nullptr), TTE_OK);
  EXPECT_EQ(tte_unregister_engine_provider("newer", nullptr), TTE_OK);
}

TEST(ProviderRegistry, UnregisterUnknownSaysSo) {
  TteError error{};
  EXPECT_EQ(tte_unregister_engine_provider("nobody", &error), TTE_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(error.message).find("'nobody' is not registered"), std::string::npos);
}

TEST(ProviderRegistry, ReleaseRunsOnceAfterUnregisterAndTheLastEngine) {
  FakeProvider provider("lifetime");
  auto state = provider.shared_state();
  const auto blob = make_blob(blob_metadata({"x"}, {"y"}),
                              fake_plan(engine({static_input("x", {4}), output_like("y", 0)})));
  {
    Delegate first;
    Delegate second;
    ASSERT_EQ(first.init(blob), et::Error::Ok);
    ASSERT_EQ(second.init(blob), et::Error::Ok);
    provider.unregister();
    EXPECT_EQ(tte_num_engine_providers(), 0u);
    EXPECT_EQ(state->releases.load(), 0) << "engines still use the provider";

    // Engines made before unregistering keep working.
    OwnedTensor x(ScalarType::Float, {4});
    OwnedTensor y(ScalarType::Float, {4});
    x.fill(1);
    EXPECT_EQ(first.execute({&x, &y}), et::Error::Ok);
    EXPECT_EQ(y.data<float>()[3], 5.0f);

    // And later loads no longer find it.
    Delegate third;
    StderrCapture log;
    EXPECT_EQ(third.init(blob), et::Error::NotFound);
    first.destroy();
    EXPECT_EQ(state->releases.load(), 0);
  }
  EXPECT_EQ(state->destroys.load(), 2);
  EXPECT_EQ(state->releases.load(), 1);
}

TEST(ProviderRegistry, LaterRegistrationsAffectLaterLoadsOnly) {
  FakeProvider first("first");
  const auto blob = make_blob(blob_metadata({"x"}, {"y"}),
                              fake_plan(engine({static_input("x", {2}), output_like("y", 0)})));
  Delegate before;
  ASSERT_EQ(before.init(blob), et::Error::Ok);
  FakeProvider native("native-later", TTE_MEMORY_HOST, TTE_PROVIDER_NATIVE);
  Delegate after;
  ASSERT_EQ(after.init(blob), et::Error::Ok);
  EXPECT_EQ(first.state().deserializes.load(), 1);
  EXPECT_EQ(native.state().deserializes.load(), 1) << "native providers are tried first";
}

TEST(ProviderLibrary, MissingFileSaysWhy) {
  TteError error{};
  EXPECT_EQ(tte_load_engine_provider_library("no-such-provider.so", TTE_PROVIDER_OTHER, &error),
            TTE_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(error.message).find("no-such-provider.so"), std::string::npos)
      << error.message;
  EXPECT_EQ(tte_load_engine_provider_library(nullptr, TTE_PROVIDER_OTHER, nullptr),
            TTE_ERROR_INVALID_ARGUMENT);
}

TEST(ProviderLibrary, LibraryWithoutEntryIsRefused) {
  // The plugin itself is a shared library without a provider entry point.
  TteError error{};
  EXPECT_EQ(tte_load_engine_provider_library(tte_library_path(), TTE_PROVIDER_OTHER, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("tte_engine_provider_entry"), std::string::npos)
      << error.message;
}

TEST(ProviderLibrary, LoadsTheHostTestProvider) {
  const std::string path = host_test_provider();
  if (access(path.c_str(), F_OK) != 0) GTEST_SKIP() << "host test provider not built at " << path;
  TteError error{};
  ASSERT_EQ(tte_load_engine_provider_library(path.c_str(), TTE_PROVIDER_OTHER, &error), TTE_OK)
      << error.message;
  EXPECT_EQ(registered_names(), std::vector<std::string>{"test-host"});
  EXPECT_EQ(tte_load_engine_provider_library(path.c_str(), TTE_PROVIDER_OTHER, &error),
            TTE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error.message).find("already registered"), std::string::npos);
  EXPECT_EQ(tte_unregister_engine_provider("test-host", nullptr), TTE_OK);
}

// The native TensorRT providers' libraries, one per TensorRT major, beside
// the plugin when this build had that major's headers: registered by the
// plugin at load (the harness took them out again, see delegate_harness.h),
// loadable like any provider library, and able to say which TensorRT of
// their major they would use without a GPU.
TEST(BundledProviders, TheNativeProvidersBesideThePluginAreRegistered) {
  std::string folder = tte_library_path();
  folder = folder.substr(0, folder.rfind('/') + 1);
  int built = 0;
  for (int major : {11, 10}) {
    const std::string name = "tensorrt-native-" + std::to_string(major);
    const std::string file = "libtte_provider_tensorrt" + std::to_string(major) + ".so";
    const std::string path = folder + file;
    TteError error{};
    char* text = nullptr;
    if (access(path.c_str(), F_OK) != 0) {
      EXPECT_EQ(tte_engine_provider_runtime(name.c_str(), &text, &error), TTE_ERROR_NOT_FOUND);
      EXPECT_NE(std::string(error.message).find(file + " is not installed beside the plugin"),
                std::string::npos)
          << error.message;
      continue;
    }
    ++built;
    ASSERT_EQ(tte_load_engine_provider_library(path.c_str(), TTE_PROVIDER_NATIVE, &error), TTE_OK)
        << error.message;
    EXPECT_EQ(registered_names(), std::vector<std::string>{name});
    ASSERT_EQ(tte_engine_provider_runtime(name.c_str(), &text, &error), TTE_OK) << error.message;
    const std::string runtime = text;
    tte_free_string(text);
    // Either the TensorRT of its major it found, or where it looked and what
    // to install.
    EXPECT_TRUE(runtime.rfind("TensorRT " + std::to_string(major) + ".", 0) == 0 ||
                runtime.find("no usable TensorRT " + std::to_string(major) + " library") !=
                    std::string::npos)
        << runtime;
    EXPECT_EQ(tte_unregister_engine_provider(name.c_str(), nullptr), TTE_OK);
  }
  EXPECT_EQ(kBundledNativeProviderWasRegistered, built > 0);
  if (built == 0) GTEST_SKIP() << "this build has no native TensorRT provider in " << folder;
}

}  // namespace
}  // namespace tte_test
