// From a delegate blob to an engine (backend/engine_loader.h), compiled from
// its sources over the process's provider registry: which provider is asked
// (selection order, the load option, the native provider of the plan's
// TensorRT major, never a device provider without a device), what each
// refusal becomes, the load options a provider receives, and the cache that
// shares one deserialized engine among loads of the same plan.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "backend/engine_loader.h"
#include "backend/provider_registry.h"
#include "backend_unit_support.h"
#include "cuda/cuda_device.h"
#include "text_match.h"

namespace {

using tte::DelegateBlob;
using tte::LoadedEngine;
using tte::LoadOptions;
using tte::Status;
using tte_test::contains;

// ---- A provider whose answers each test chooses ----------------------------------

struct Fake {
  std::string name;
  TteMemoryKind memory = TTE_MEMORY_HOST;
  std::string refuse;            // NOT_ACCEPTED with this message
  std::string fail;              // RUNTIME with this message
  bool no_engine = false;        // TTE_OK without an engine
  bool scratch_entries = false;  // device_memory_size and set_device_memory
  bool contexts = false;         // create_execution_context
  bool contexts_fail = false;
  int asked = 0;  // deserialize calls
  int deserialized = 0, contexts_made = 0, destroyed = 0;
  TteEngineLoadOptions last{};
  std::vector<std::string> last_plugins;
  std::string last_runtime_cache;
};

struct FakeHandle {
  Fake* fake;
};

TteStatus answer(TteError* error, TteStatus code, const std::string& message) {
  error->code = code;
  std::snprintf(error->message, sizeof(error->message), "%s", message.c_str());
  return code;
}

TteStatus fake_deserialize(void* user_data, const void*, uint64_t,
                           const TteEngineLoadOptions* options, TteEngine** out, TteError* error) {
  Fake* fake = static_cast<Fake*>(user_data);
  ++fake->asked;
  if (!fake->refuse.empty()) return answer(error, TTE_ERROR_NOT_ACCEPTED, fake->refuse);
  if (!fake->fail.empty()) return answer(error, TTE_ERROR_RUNTIME, fake->fail);
  fake->last = *options;
  fake->last_plugins.clear();
  for (int32_t i = 0; i < options->num_plugin_libraries; ++i) {
    fake->last_plugins.emplace_back(options->plugin_libraries[i]);
  }
  fake->last_runtime_cache = options->runtime_cache_path ? options->runtime_cache_path : "";
  if (fake->no_engine) return TTE_OK;
  ++fake->deserialized;
  *out = reinterpret_cast<TteEngine*>(new FakeHandle{fake});
  return TTE_OK;
}

TteStatus fake_context(TteEngine* engine, const TteEngineLoadOptions*, TteEngine** out,
                       TteError* error) {
  Fake* fake = reinterpret_cast<FakeHandle*>(engine)->fake;
  if (fake->contexts_fail) return answer(error, TTE_ERROR_RUNTIME, "no context today");
  ++fake->contexts_made;
  *out = reinterpret_cast<TteEngine*>(new FakeHandle{fake});
  return TTE_OK;
}

void fake_destroy(TteEngine* engine) {
  auto* handle = reinterpret_cast<FakeHandle*>(engine);
  ++handle->fake->destroyed;
  delete handle;
}

// The calls the loader never makes: present because registration needs them.
TteStatus unused(TteError* error) { return answer(error, TTE_ERROR_INTERNAL, "not used here"); }

TteEngineProvider fake_abi(Fake* fake) {
  TteEngineProvider p{};
  p.abi_version = TTE_ENGINE_PROVIDER_ABI_VERSION;
  p.struct_size = sizeof(p);
  p.name = fake->name.c_str();
  p.memory_kind = fake->memory;
  p.user_data = fake;
  p.deserialize = fake_deserialize;
  p.num_io_tensors = [](TteEngine*, int32_t*, TteError* e) { return unused(e); };
  p.describe_io_tensor = [](TteEngine*, int32_t, TteIoTensorDesc*, TteError* e) {
    return unused(e);
  };
  p.num_profiles = [](TteEngine*, int32_t*, TteError* e) { return unused(e); };
  p.profile_shape = [](TteEngine*, int32_t, int32_t, int64_t*, int64_t*, int64_t*, TteError* e) {
    return unused(e);
  };
  p.select_profile = [](TteEngine*, int32_t, void*, TteError* e) { return unused(e); };
  p.set_input_shape = [](TteEngine*, int32_t, const int64_t*, int32_t, TteError* e) {
    return unused(e);
  };
  p.get_output_shape = [](TteEngine*, int32_t, int64_t*, int32_t, int32_t*, TteError* e) {
    return unused(e);
  };
  p.set_tensor_address = [](TteEngine*, int32_t, void*, TteError* e) { return unused(e); };
  p.enqueue = [](TteEngine*, void*, TteError* e) { return unused(e); };
  p.destroy = fake_destroy;
  if (fake->scratch_entries) {
    p.device_memory_size = [](TteEngine*, int32_t, int64_t* bytes, TteError*) -> TteStatus {
      *bytes = 0;
      return TTE_OK;
    };
    p.set_device_memory = [](TteEngine*, void*, int64_t, TteError*) -> TteStatus { return TTE_OK; };
  }
  if (fake->contexts) p.create_execution_context = fake_context;
  return p;
}

// "ftrt", serialization version 0, the TensorRT version at byte 24, then
// anything: what a TensorRT plan's header says of the TensorRT that built it.
std::string tensorrt_plan(int major, int minor, int patch) {
  std::string plan(28, '\0');
  plan.replace(0, 4, "ftrt");
  plan[24] = static_cast<char>(major);
  plan[25] = static_cast<char>(minor);
  plan[26] = static_cast<char>(patch);
  return plan + "engine bytes";
}

class EngineLoader : public ::testing::Test {
 protected:
  void TearDown() override {
    for (LoadedEngine& engine : loaded_) tte::release_engine(&engine);
    for (const auto& fake : fakes_) tte::ProviderRegistry::instance().remove(fake->name.c_str());
    EXPECT_EQ(tte::shared_engine_count(), 0u);
  }

  // Registers `fake` (copied) for this test.
  Fake& add(Fake fake, TteProviderKind kind = TTE_PROVIDER_OTHER) {
    fakes_.push_back(std::make_unique<Fake>(std::move(fake)));
    Fake& added = *fakes_.back();
    const TteEngineProvider abi = fake_abi(&added);
    const Status status = tte::ProviderRegistry::instance().add(&abi, kind);
    EXPECT_TRUE(status.ok()) << status.message();
    return added;
  }
  static Fake named(const std::string& name) {
    Fake fake;
    fake.name = name;
    return fake;
  }
  static Fake refusing(const std::string& name, const std::string& why) {
    Fake fake = named(name);
    fake.refuse = why;
    return fake;
  }

  DelegateBlob blob(const std::string& plan, int32_t device_id = 0) {
    plans_.push_back(plan);
    DelegateBlob b;
    b.metadata.device_id = device_id;
    b.engine = reinterpret_cast<const uint8_t*>(plans_.back().data());
    b.engine_size = plans_.back().size();
    return b;
  }

  // Loads `b`; a loaded engine is released at the end of the test.
  Status load(const DelegateBlob& b, const LoadOptions& options = {}, bool user_managed = false,
              LoadedEngine** out = nullptr) {
    LoadedEngine engine;
    Status status = tte::load_engine(b, options, user_managed, &engine);
    if (engine.engine != nullptr) {
      loaded_.push_back(std::move(engine));
      if (out != nullptr) *out = &loaded_.back();
    }
    return status;
  }

  std::deque<std::unique_ptr<Fake>> fakes_;
  std::deque<std::string> plans_;
  std::deque<LoadedEngine> loaded_;
};

TEST_F(EngineLoader, RefusesADeviceIdBelowMinusOne) {
  Fake& taker = add(named("taker"));
  const Status status = load(blob("plan", -2));
  EXPECT_EQ(status.code(), TTE_ERROR_INVALID_PROGRAM);
  EXPECT_EQ(status.message(),
            "delegate blob has device_id -2; expected a CUDA device index >= 0 or -1");
  EXPECT_EQ(taker.asked, 0);
}

TEST_F(EngineLoader, WithoutAnyProviderSaysHowToRegisterOne) {
  const Status status = load(blob("plan"));
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_TRUE(contains(status.message(),
                       "no engine provider is registered, so TensorRTBackend "
                       "cannot load TensorRT engines"))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "tte_load_engine_provider_library")) << status.message();
}

TEST_F(EngineLoader, TakesTheFirstProviderThatAcceptsAndListsEveryRefusal) {
  // Native providers are asked first, whenever they were registered.
  Fake& taker = add(named("taker"));
  Fake& picky = add(refusing("picky", "not my format"), TTE_PROVIDER_NATIVE);
  LoadedEngine* engine = nullptr;
  ASSERT_TRUE(load(blob("plan"), {}, false, &engine).ok());
  EXPECT_EQ(picky.asked, 1);
  EXPECT_EQ(engine->provider->name(), "taker");
  EXPECT_EQ(engine->device, -1) << "a host provider's engine has no device";
  EXPECT_EQ(taker.deserialized, 1);

  taker.refuse = "not mine either";
  const Status status = load(blob("plan"));
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_ACCEPTED);
  EXPECT_EQ(status.message(),
            "no registered engine provider accepts this engine: 'picky': not my format; "
            "'taker': not mine either");
}

TEST_F(EngineLoader, OnlyARefusalLetsTheNextProviderTry) {
  Fake& broken = add(named("broken"));
  broken.fail = "the plan is corrupt";
  Fake& taker = add(named("taker"));
  const Status status = load(blob("12345678"));
  EXPECT_EQ(status.code(), TTE_ERROR_RUNTIME);
  EXPECT_EQ(status.message(),
            "engine provider 'broken' could not load the engine (8 bytes): the plan is corrupt");
  EXPECT_EQ(taker.asked, 0);
}

TEST_F(EngineLoader, TheProviderOptionAsksThatProviderAlone) {
  Fake& taker = add(named("taker"));
  add(refusing("picky", "not my format"));
  LoadOptions options;
  options.provider = "picky";
  Status status = load(blob("12345678"), options);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_ACCEPTED);
  EXPECT_EQ(status.message(),
            "engine provider 'picky' could not load the engine (8 bytes): not my format");
  EXPECT_EQ(taker.asked, 0) << "a named provider's refusal is the answer";

  options.provider = "nope";
  status = load(blob("plan"), options);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_EQ(status.message(),
            "engine provider 'nope' (load option 'provider') is not registered; registered: "
            "'taker', 'picky'");
}

TEST_F(EngineLoader, DeviceProvidersAreNeverAskedWithoutADevice) {
  if (tte::cuda_device_count() != 0) {
    GTEST_SKIP() << "a CUDA device is present: device providers are asked";
  }
  Fake device = named("gpu-only");
  device.memory = TTE_MEMORY_DEVICE;
  Fake& gpu = add(device);
  Status status = load(blob("plan"));
  EXPECT_EQ(status.code(), TTE_ERROR_NO_DEVICE);
  EXPECT_TRUE(contains(status.message(), "no CUDA device (")) << status.message();
  EXPECT_TRUE(contains(status.message(),
                       "TensorRT engines need an NVIDIA GPU ('gpu-only' needs a CUDA device)"))
      << status.message();
  EXPECT_EQ(gpu.asked, 0);

  add(named("host"));
  LoadedEngine* engine = nullptr;
  ASSERT_TRUE(load(blob("plan"), {}, false, &engine).ok());
  EXPECT_EQ(engine->provider->name(), "host");
  EXPECT_EQ(gpu.asked, 0);
}

TEST_F(EngineLoader, APlanGoesToTheNativeProviderOfItsTensorRTMajor) {
  Fake& trt11 = add(named("tensorrt-native-11"), TTE_PROVIDER_NATIVE);
  Fake& trt10 = add(named("tensorrt-native-10"), TTE_PROVIDER_NATIVE);
  LoadedEngine* engine = nullptr;
  ASSERT_TRUE(load(blob(tensorrt_plan(10, 3, 0)), {}, false, &engine).ok());
  EXPECT_EQ(engine->provider->name(), "tensorrt-native-10");
  EXPECT_EQ(trt11.asked, 0);
  ASSERT_TRUE(load(blob(tensorrt_plan(11, 1, 0)), {}, false, &engine).ok());
  EXPECT_EQ(engine->provider->name(), "tensorrt-native-11");
  EXPECT_EQ(trt10.asked, 1);
  // A plan without a version: every provider, in selection order.
  ASSERT_TRUE(load(blob("no header"), {}, false, &engine).ok());
  EXPECT_EQ(engine->provider->name(), "tensorrt-native-11");
  // The option "tensorrt-native" takes the plan's major too.
  LoadOptions options;
  options.provider = "tensorrt-native";
  ASSERT_TRUE(load(blob(tensorrt_plan(10, 3, 0)), options, false, &engine).ok());
  EXPECT_EQ(engine->provider->name(), "tensorrt-native-10");
}

TEST_F(EngineLoader, APlanWhoseMajorHasNoNativeProviderSaysSo) {
  Fake& trt11 = add(named("tensorrt-native-11"), TTE_PROVIDER_NATIVE);
  add(refusing("picky", "not a test plan"));
  Status status = load(blob(tensorrt_plan(10, 3, 0)));
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_ACCEPTED);
  EXPECT_TRUE(contains(status.message(),
                       "the plan was built by TensorRT 10.3.0, and no native provider for "
                       "TensorRT 10 ('tensorrt-native-10') is registered"))
      << status.message();
  EXPECT_TRUE(contains(status.message(),
                       "'tensorrt-native-11' runs TensorRT 11 plans only; "
                       "'picky': not a test plan"))
      << status.message();
  EXPECT_EQ(trt11.asked, 0);

  LoadOptions options;
  options.provider = "tensorrt-native";
  status = load(blob(tensorrt_plan(10, 3, 0)), options);
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_FOUND);
  EXPECT_TRUE(contains(status.message(),
                       "load option provider='tensorrt-native' takes the native provider of "
                       "that major, but no native provider for TensorRT 10"))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "registered: 'tensorrt-native-11', 'picky'"))
      << status.message();
}

TEST_F(EngineLoader, HandsTheLoadOptionsToTheProvider) {
  Fake plain = named("plain");
  Fake& provider = add(plain);
  LoadOptions options;
  options.has_weight_streaming_budget = true;
  options.weight_streaming_budget = 1 << 20;
  options.engine_host_code_allowed = false;
  options.has_dla_core = true;
  options.dla_core = 1;
  options.plugin_libraries = {"/opt/a.so", "/opt/b.so"};
  options.runtime_cache_path = "/tmp/runtime.cache";
  ASSERT_TRUE(load(blob("plan", 0), options, /*user_managed=*/true).ok());
  const TteEngineLoadOptions& got = provider.last;
  EXPECT_EQ(got.struct_size, sizeof(TteEngineLoadOptions));
  EXPECT_EQ(got.device_id, 0);
  EXPECT_EQ(got.has_weight_streaming_budget, 1);
  EXPECT_EQ(got.weight_streaming_budget, 1 << 20);
  EXPECT_EQ(got.refuse_engine_host_code, 1);
  EXPECT_EQ(got.has_dla_core, 1);
  EXPECT_EQ(got.dla_core, 1);
  EXPECT_EQ(provider.last_plugins, (std::vector<std::string>{"/opt/a.so", "/opt/b.so"}));
  EXPECT_EQ(provider.last_runtime_cache, "/tmp/runtime.cache");
  EXPECT_EQ(got.user_managed_device_memory, 0) << "the provider has no scratch entries";

  // Device -1: the thread's current device.
  ASSERT_TRUE(load(blob("plan", -1)).ok());
  EXPECT_EQ(provider.last.device_id, tte::current_cuda_device());
  EXPECT_EQ(provider.last.refuse_engine_host_code, 0);
  EXPECT_EQ(provider.last.runtime_cache_path, nullptr);
}

TEST_F(EngineLoader, UserManagedMemoryNeedsBothScratchEntries) {
  Fake with = named("with-scratch");
  with.scratch_entries = true;
  Fake& provider = add(with);
  LoadedEngine* engine = nullptr;
  ASSERT_TRUE(load(blob("plan"), {}, /*user_managed=*/true, &engine).ok());
  EXPECT_EQ(provider.last.user_managed_device_memory, 1);
  EXPECT_TRUE(engine->user_managed_memory);
  ASSERT_TRUE(load(blob("plan"), {}, /*user_managed=*/false, &engine).ok());
  EXPECT_EQ(provider.last.user_managed_device_memory, 0);
  EXPECT_FALSE(engine->user_managed_memory);
}

TEST_F(EngineLoader, LoadsOfOnePlanShareOneDeserializedEngine) {
  Fake sharing = named("sharing");
  sharing.contexts = true;
  Fake& provider = add(sharing);
  LoadedEngine* first = nullptr;
  LoadedEngine* second = nullptr;
  ASSERT_TRUE(load(blob("the plan"), {}, false, &first).ok());
  ASSERT_NE(first->shared, nullptr);
  EXPECT_EQ(first->engine, first->shared->root());
  // The same bytes at another address: the same plan.
  ASSERT_TRUE(load(blob("the plan"), {}, false, &second).ok());
  EXPECT_EQ(provider.deserialized, 1);
  EXPECT_EQ(provider.contexts_made, 1);
  EXPECT_EQ(second->shared, first->shared);
  EXPECT_NE(second->engine, first->engine) << "a context of its own";
  EXPECT_EQ(tte::shared_engine_count(), 1u);

  // An option that changes what deserialize makes is another engine; so is
  // another plan.
  LoadOptions budget;
  budget.has_weight_streaming_budget = true;
  budget.weight_streaming_budget = 4096;
  ASSERT_TRUE(load(blob("the plan"), budget).ok());
  ASSERT_TRUE(load(blob("the other plan")).ok());
  EXPECT_EQ(provider.deserialized, 3);
  EXPECT_EQ(tte::shared_engine_count(), 3u);

  // The root outlives the load that made it while another uses it.
  tte::release_engine(first);
  EXPECT_EQ(provider.destroyed, 0);
  EXPECT_EQ(tte::shared_engine_count(), 3u);
  tte::release_engine(second);
  EXPECT_EQ(provider.destroyed, 2);
  EXPECT_EQ(tte::shared_engine_count(), 2u);
}

TEST_F(EngineLoader, UntrustedUnsharedOrContextlessLoadsDeserializeAnew) {
  Fake sharing = named("sharing");
  sharing.contexts = true;
  Fake& provider = add(sharing);
  LoadOptions untrusted;
  untrusted.engine_host_code_allowed = false;
  LoadOptions unshared;
  unshared.share_engines = false;
  for (const LoadOptions& options : {untrusted, unshared}) {
    LoadedEngine* engine = nullptr;
    ASSERT_TRUE(load(blob("plan"), options, false, &engine).ok());
    EXPECT_EQ(engine->shared, nullptr);
  }
  EXPECT_EQ(provider.deserialized, 2);
  EXPECT_EQ(provider.contexts_made, 0);
  EXPECT_EQ(tte::shared_engine_count(), 0u);

  // A context that cannot be made: the plan is deserialized again.
  provider.contexts_fail = true;
  LoadedEngine* first = nullptr;
  LoadedEngine* second = nullptr;
  ASSERT_TRUE(load(blob("plan"), {}, false, &first).ok());
  ASSERT_TRUE(load(blob("plan"), {}, false, &second).ok());
  EXPECT_EQ(provider.deserialized, 4);
  EXPECT_NE(second->shared, first->shared);
  EXPECT_EQ(second->engine, second->shared->root());
}

TEST_F(EngineLoader, SuccessWithoutAnEngineIsAnInternalError) {
  Fake liar = named("liar");
  liar.no_engine = true;
  add(liar);
  const Status status = load(blob("plan"));
  EXPECT_EQ(status.code(), TTE_ERROR_INTERNAL);
  EXPECT_EQ(status.message(), "engine provider 'liar' reported success but returned no engine");
}

TEST_F(EngineLoader, TheHostTestProviderLoadsATestPlanAndRefusesOthers) {
  tte_unit::HostTestProvider& library = tte_unit::HostTestProvider::instance();
  ASSERT_TRUE(library.loaded()) << library.error();
  ASSERT_TRUE(tte::ProviderRegistry::instance().add(library.batched(), TTE_PROVIDER_OTHER).ok());
  struct Unregister {
    ~Unregister() { tte::ProviderRegistry::instance().remove("test-host"); }
  } unregister;
  library.reset_stats();
  LoadedEngine* engine = nullptr;
  ASSERT_TRUE(load(blob(tte_unit::add_one_plan(1, 8), 0), {}, false, &engine).ok());
  EXPECT_EQ(engine->provider->name(), "test-host");
  ASSERT_TRUE(load(blob(tte_unit::add_one_plan(1, 8), 0)).ok());
  EXPECT_EQ(library.stats().deserializes, 1u);
  EXPECT_EQ(library.stats().execution_contexts, 1u);

  const Status status = load(blob(tensorrt_plan(10, 3, 0)));
  EXPECT_EQ(status.code(), TTE_ERROR_NOT_ACCEPTED);
  EXPECT_TRUE(contains(status.message(), "'test-host': test-host accepts only test-engine plans"))
      << status.message();
}

}  // namespace
