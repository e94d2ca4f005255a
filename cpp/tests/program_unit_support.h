// What the focused program tests (test_program_inputs, test_program_outputs,
// test_method_load_checks) share: the fixture programs
// (tests/fixtures/cpp/, copied to TTE_CPP_FIXTURE_DIR by the ctest fixture
// tte_cpp_programs), loaded with ExecuTorch's Module (ProgramModule), over
// a stand-in TensorRTBackend registered here instead of the plugin's: its
// execute makes each output k the shape of input k, with input k's elements
// plus one (float32) or copied (other dtypes), which is what the fixtures'
// add_one and identity engines do to the tensors these tests use. No engine
// provider, no plugin: the tests see the program units alone.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include "blob/blob_reader.h"
#include "program/program_module.h"
#include "torch_tensorrt_executorch/c_api.h"
#include "torch_tensorrt_executorch/dlpack.h"

namespace tte_unit {

namespace et = executorch::runtime;

inline std::string fixture(const std::string& name) {
  return std::string(TTE_CPP_FIXTURE_DIR) + "/" + name;
}

class StandInTensorRTBackend final : public et::BackendInterface {
 public:
  bool is_available() const override { return true; }

  et::Result<et::DelegateHandle*> init(et::BackendInitContext&, et::FreeableBuffer* processed,
                                       et::ArrayRef<et::CompileSpec>) const override {
    auto blob = tte::parse_delegate_blob(processed->data(), processed->size());
    if (!blob) return et::Error::InvalidProgram;
    auto* inputs = new size_t(blob.value().metadata.input_names().size());
    processed->Free();
    return reinterpret_cast<et::DelegateHandle*>(inputs);
  }

  et::Error execute(et::BackendExecutionContext&, et::DelegateHandle* handle,
                    et::Span<et::EValue*> args) const override {
    const size_t inputs = *reinterpret_cast<size_t*>(handle);
    for (size_t k = 0; k < inputs && inputs + k < args.size(); ++k) {
      const executorch::aten::Tensor in = args[k]->toTensor();
      executorch::aten::Tensor out = args[inputs + k]->toTensor();
      if (et::resize_tensor(out, in.sizes()) != et::Error::Ok) return et::Error::InvalidArgument;
      if (in.scalar_type() == executorch::aten::ScalarType::Float) {
        for (ssize_t i = 0; i < in.numel(); ++i) {
          out.mutable_data_ptr<float>()[i] = in.const_data_ptr<float>()[i] + 1.0f;
        }
      } else if (in.nbytes() > 0) {
        std::memcpy(out.mutable_data_ptr(), in.const_data_ptr(), in.nbytes());
      }
    }
    return et::Error::Ok;
  }

  void destroy(et::DelegateHandle* handle) const override {
    delete reinterpret_cast<size_t*>(handle);
  }
};

inline const bool kStandInRegistered = [] {
  static StandInTensorRTBackend backend;
  return et::register_backend(et::Backend{"TensorRTBackend", &backend}) == et::Error::Ok;
}();

// A fixture program with method `method` loaded: the module, its Method,
// and a MethodState named after it.
struct LoadedMethod {
  std::unique_ptr<tte::ProgramModule> module;
  et::Method* method = nullptr;
  tte::MethodState state;
};

inline void load_fixture(const std::string& name, LoadedMethod* out,
                         const std::string& method = "forward") {
  ASSERT_TRUE(kStandInRegistered);
  out->module = std::make_unique<tte::ProgramModule>(fixture(name));
  ASSERT_EQ(out->module->load_method(method), et::Error::Ok) << name;
  out->method = out->module->loaded_method(method);
  ASSERT_NE(out->method, nullptr);
  out->state.name = method;
  out->state.method = out->method;
}

// A DLTensor over `data` (NULL strides: row-major).
inline DLTensor dl_tensor(void* data, std::vector<int64_t>& shape, DLDataType dtype,
                          DLDevice device = DLDevice{kDLCPU, 0}) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  return t;
}

inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};

inline TteInput tensor_input(DLTensor* tensor, uint64_t flags = 0) {
  TteInput input{};
  input.tag = TTE_VALUE_TENSOR;
  input.tensor = tensor;
  input.int_value = static_cast<int64_t>(flags);
  return input;
}

}  // namespace tte_unit
