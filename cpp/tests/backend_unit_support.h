// What the focused backend tests (test_tensor_binding, test_engine_loader,
// test_tensorrt_delegate) share. They compile the backend units from their
// sources, so they reach tte::ProviderRegistry and the units' own functions
// directly, without the plugin and its C API: ExecuTorch tensors over host
// memory the test owns (alignment chosen), delegate blobs, test-engine plans
// (docs/test-engine-format.md), and the host test provider library
// (libtte_test_provider_host.so, TTE_TEST_HOST_PROVIDER) with its counters.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>

#include "blob_bytes.h"
#include "testing/test_provider_api.h"
#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte_unit {

namespace et = executorch::runtime;
using executorch::aten::ScalarType;
using executorch::aten::TensorShapeDynamism;

// A contiguous ExecuTorch tensor over host memory of its own: 256-byte
// aligned, then `offset` bytes further (a misaligned view when offset % 256
// != 0), with room for `capacity` elements (a DYNAMIC_BOUND tensor can grow
// to it). `no_data`: the tensor points at NULL.
class HostTensor {
 public:
  HostTensor(ScalarType dtype, std::vector<int32_t> sizes, size_t offset = 0, int64_t capacity = -1,
             TensorShapeDynamism dynamism = TensorShapeDynamism::DYNAMIC_BOUND,
             bool no_data = false)
      : sizes_(std::move(sizes)) {
    const size_t rank = sizes_.size();
    dim_order_.resize(rank);
    strides_.resize(rank);
    int32_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      dim_order_[d] = static_cast<uint8_t>(d);
      strides_[d] = stride;
      stride *= sizes_[d];
    }
    int64_t numel = 1;
    for (int32_t s : sizes_) numel *= s;
    if (capacity < numel) capacity = numel;
    const size_t bytes = static_cast<size_t>(capacity) * et::elementSize(dtype);
    void* base = nullptr;
    if (posix_memalign(&base, 256, offset + bytes + 1) != 0) std::abort();
    storage_.reset(base);
    std::memset(base, 0, offset + bytes + 1);
    void* data = no_data ? nullptr : static_cast<char*>(base) + offset;
    impl_ = std::make_unique<executorch::aten::TensorImpl>(dtype, static_cast<ssize_t>(rank),
                                                           sizes_.data(), data, dim_order_.data(),
                                                           strides_.data(), dynamism);
    value_ = std::make_unique<et::EValue>(executorch::aten::Tensor(impl_.get()));
  }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  et::EValue* value() { return value_.get(); }
  executorch::aten::Tensor tensor() const { return executorch::aten::Tensor(impl_.get()); }
  void* data() const { return impl_->mutable_data(); }
  size_t nbytes() const { return impl_->nbytes(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(impl_->mutable_data());
  }
  std::vector<int32_t> sizes() const {
    return std::vector<int32_t>(impl_->sizes().begin(), impl_->sizes().end());
  }
  // Elements start, start + 1, ... (float tensors).
  void fill(float start) {
    for (ssize_t i = 0; i < impl_->numel(); ++i) as<float>()[i] = start + static_cast<float>(i);
  }
  void set(const std::vector<float>& values) {
    std::memcpy(data(), values.data(), values.size() * sizeof(float));
  }
  std::vector<float> values() const {
    return std::vector<float>(as<float>(), as<float>() + impl_->numel());
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::vector<int32_t> sizes_;
  std::vector<uint8_t> dim_order_;
  std::vector<int32_t> strides_;
  std::unique_ptr<void, Free> storage_;
  std::unique_ptr<executorch::aten::TensorImpl> impl_;
  std::unique_ptr<et::EValue> value_;
};

inline bool aligned_256(const void* p) { return reinterpret_cast<uintptr_t>(p) % 256 == 0; }

// ---- Delegate blobs -----------------------------------------------------------

// The metadata JSON Torch-TensorRT writes: inputs then outputs, by name.
inline std::string blob_metadata(const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, int device_id = 0) {
  std::string bindings;
  auto add = [&](const std::string& name, bool is_input) {
    bindings += (bindings.empty() ? "" : ",");
    bindings += "{\"name\":\"" + name +
                "\",\"dtype\":\"\",\"shape\":[],\"is_input\":" + (is_input ? "true" : "false") +
                "}";
  };
  for (const auto& name : inputs) add(name, true);
  for (const auto& name : outputs) add(name, false);
  return "{\"io_bindings\":[" + bindings +
         "],\"aliased_io\":[],\"hardware_compatible\":false,\"device_id\":" +
         std::to_string(device_id) +
         ",\"serialized_metadata\":\"\",\"target_platform\":\"linux_x86_64\"}";
}

// A TR01 blob of the JSON and the plan.
inline std::vector<uint8_t> make_blob(const std::string& json, const std::string& plan) {
  return tte_test::blob_bytes("TR01", json, plan);
}

// A test-engine plan: the magic, then the JSON object.
inline std::string test_plan(const std::string& json) { return "TTE-TEST-ENGINE\n" + json; }

// y = x + 1 over float32 x of rows in [min_rows, max_rows] and 4 columns;
// `extra` adds keys to the plan ("\"fail\":{...}", "\"scratch_bytes\":N").
inline std::string add_one_plan(int min_rows, int max_rows, const std::string& extra = "") {
  return test_plan(
      "{\"op\":\"add_one\",\"tensors\":[{\"name\":\"x\",\"is_input\":true,\"dtype\":\"float32\","
      "\"profiles\":[{\"min\":[" +
      std::to_string(min_rows) + ",4],\"opt\":[" + std::to_string(max_rows) + ",4],\"max\":[" +
      std::to_string(max_rows) +
      ",4]}]},{\"name\":\"y\",\"is_input\":false,\"dtype\":\"float32\",\"shape_of\":\"x\"}]" +
      (extra.empty() ? "" : "," + extra) + "}");
}

// ---- The host test provider ------------------------------------------------------

// libtte_test_provider_host.so, opened once: its providers' structs and its
// counters. In $TTE_TEST_PROVIDER_DIR when set (a build copied elsewhere),
// else where this build put it.
class HostTestProvider {
 public:
  static HostTestProvider& instance() {
    static HostTestProvider* library = new HostTestProvider();
    return *library;
  }
  static std::string path() {
    if (const char* dir = std::getenv("TTE_TEST_PROVIDER_DIR"); dir != nullptr && *dir != '\0') {
      return std::string(dir) + "/libtte_test_provider_host.so";
    }
    return TTE_TEST_HOST_PROVIDER;
  }
  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  // "test-host": batched entry, shared engines, user-managed scratch, ABI 2.
  const TteEngineProvider* batched() const { return entry_(TTE_ENGINE_PROVIDER_ABI_VERSION); }
  // "test-host-per-tensor": the same engines as an ABI version 1 provider.
  const TteEngineProvider* per_tensor() const { return per_tensor_(); }
  TteTestProviderStats stats() const {
    TteTestProviderStats stats{};
    stats.struct_size = sizeof(stats);
    stats_(&stats);
    return stats;
  }
  void reset_stats() const { reset_(); }

 private:
  HostTestProvider() {
    handle_ = dlopen(path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      error_ = why != nullptr ? why : "dlopen failed";
      return;
    }
    entry_ = reinterpret_cast<TteEngineProviderEntryFn>(
        dlsym(handle_, TTE_ENGINE_PROVIDER_ENTRY_SYMBOL));
    per_tensor_ = reinterpret_cast<const TteEngineProvider* (*)()>(
        dlsym(handle_, "tte_test_host_provider_per_tensor"));
    stats_ = reinterpret_cast<void (*)(TteTestProviderStats*)>(
        dlsym(handle_, "tte_test_provider_stats"));
    reset_ = reinterpret_cast<void (*)()>(dlsym(handle_, "tte_test_provider_reset_stats"));
    if (entry_ == nullptr || per_tensor_ == nullptr || stats_ == nullptr || reset_ == nullptr) {
      error_ = "a symbol of the host test provider is missing";
      handle_ = nullptr;
    }
  }
  void* handle_ = nullptr;
  std::string error_;
  TteEngineProviderEntryFn entry_ = nullptr;
  const TteEngineProvider* (*per_tensor_)() = nullptr;
  void (*stats_)(TteTestProviderStats*) = nullptr;
  void (*reset_)() = nullptr;
};

}  // namespace tte_unit
