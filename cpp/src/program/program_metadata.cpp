#include "program/program_metadata.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/dtypes.h"
#include "common/et_status.h"
#include "common/text.h"
#include "program/executorch_step.h"

namespace tte {

namespace et = executorch::runtime;
using et::etensor::DeviceType;

std::string io_label(const std::string& method, bool is_input, size_t index,
                     const std::string& name) {
  std::string label =
      std::string(is_input ? "input " : "output ") + std::to_string(index) + " of '" + method + "'";
  if (!name.empty()) {
    label += " ('" + printable(name) + "')";
  }
  return label;
}

const char* tag_name(et::Tag tag) {
  switch (tag) {
    case et::Tag::None:
      return "none";
    case et::Tag::Tensor:
      return "tensor";
    case et::Tag::String:
      return "string";
    case et::Tag::Double:
      return "double";
    case et::Tag::Int:
      return "int";
    case et::Tag::Bool:
      return "bool";
    default:
      return "list";
  }
}

const char* value_tag_name(TteValueTag tag) {
  switch (tag) {
    case TTE_VALUE_NONE:
      return "none";
    case TTE_VALUE_TENSOR:
      return "tensor";
    case TTE_VALUE_INT:
      return "int";
    case TTE_VALUE_DOUBLE:
      return "double";
    case TTE_VALUE_BOOL:
      return "bool";
    default:
      return "other";
  }
}

TteValueTag value_tag(et::Tag tag) {
  switch (tag) {
    case et::Tag::None:
      return TTE_VALUE_NONE;
    case et::Tag::Tensor:
      return TTE_VALUE_TENSOR;
    case et::Tag::Int:
      return TTE_VALUE_INT;
    case et::Tag::Double:
      return TTE_VALUE_DOUBLE;
    case et::Tag::Bool:
      return TTE_VALUE_BOOL;
    default:
      return TTE_VALUE_OTHER;
  }
}

Status fill_value_info(const et::MethodMeta& meta, et::Method* loaded, bool is_input, size_t index,
                       TteValueInfo* info) {
  *info = TteValueInfo{};
  info->device_type = -1;
  info->device_index = -1;
  const size_t count = is_input ? meta.num_inputs() : meta.num_outputs();
  const std::string label = std::string(is_input ? "input " : "output ") + std::to_string(index);
  if (index >= count) {
    return Status(TTE_ERROR_INVALID_ARGUMENT, label + " does not exist: method '" + meta.name() +
                                                  "' has " + std::to_string(count) +
                                                  (is_input ? " inputs" : " outputs"));
  }
  auto tag = is_input ? meta.input_tag(index) : meta.output_tag(index);
  if (!tag.ok()) {
    return damaged_method_meta(
        tag.error(), "cannot read the type of " + io_label(meta.name(), is_input, index, ""));
  }
  info->tag = value_tag(*tag);
  if (*tag != et::Tag::Tensor) {
    return Status::Ok();
  }
  auto tensor = is_input ? meta.input_tensor_meta(index) : meta.output_tensor_meta(index);
  if (!tensor.ok()) {
    return damaged_method_meta(tensor.error(), "cannot read the metadata of " +
                                                   io_label(meta.name(), is_input, index, ""));
  }
  const auto sizes = tensor->sizes();
  if (sizes.size() > TTE_MAX_RANK) {
    return Status(TTE_ERROR_NOT_SUPPORTED, label + " has rank " + std::to_string(sizes.size()) +
                                               ", above TTE_MAX_RANK (" +
                                               std::to_string(TTE_MAX_RANK) + ")");
  }
  info->scalar_type = static_cast<int32_t>(tensor->scalar_type());
  info->rank = static_cast<int32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    info->sizes[d] = sizes[d];
  }
  info->is_memory_planned = tensor->is_memory_planned() ? 1 : 0;
  info->nbytes = tensor->nbytes();
  if (loaded != nullptr) {
    const et::EValue& value = is_input ? method_input(*loaded, index) : loaded->get_output(index);
    if (value.isTensor()) {
      info->device_type =
          value.toTensor().device_type() == DeviceType::CUDA ? TTE_DEVICE_CUDA : TTE_DEVICE_CPU;
      info->device_index = value.toTensor().device_index();
    }
  }
  return Status::Ok();
}

namespace {

std::string hex_bytes(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    text += kDigits[c >> 4];
    text += kDigits[c & 15];
  }
  return text;
}

bool printable_utf8(const std::string& bytes) {
  for (unsigned char c : bytes) {
    if (c < 0x20 || c == 0x7f) {
      return false;
    }
  }
  return is_utf8(bytes);
}

nlohmann::json value_info_json(const TteValueInfo& info, const std::string& name) {
  nlohmann::json value;
  value["tag"] = value_tag_name(info.tag);
  if (info.tag != TTE_VALUE_TENSOR) {
    return value;
  }
  if (!name.empty()) {
    value["name"] = name;
  }
  value["dtype"] = scalar_type_name(static_cast<ScalarType>(info.scalar_type));
  value["scalar_type"] = info.scalar_type;
  value["shape"] = std::vector<int64_t>(info.sizes, info.sizes + info.rank);
  value["memory_planned"] = info.is_memory_planned != 0;
  value["nbytes"] = info.nbytes;
  if (info.device_type == TTE_DEVICE_CUDA) {
    value["device"] = "cuda:" + std::to_string(info.device_index);
  } else if (info.device_type == TTE_DEVICE_CPU) {
    value["device"] = "cpu";
  } else {
    value["device"] = nullptr;
  }
  return value;
}

}  // namespace

Status describe_program_json(ProgramModule& module, const std::vector<std::string>& method_names,
                             const std::map<std::string, std::unique_ptr<MethodState>>& methods,
                             bool etdump_enabled, std::string* json) {
  nlohmann::json method_docs = nlohmann::json::array();
  for (const std::string& name : method_names) {
    auto meta = module.method_meta(name);
    if (!meta.ok()) {
      return damaged_method_meta(meta.error(), "cannot read method '" + name + "'");
    }
    et::Method* loaded = module.loaded_method(name);
    nlohmann::json method;
    method["name"] = name;
    method["loaded"] = loaded != nullptr;
    for (const bool is_input : {true, false}) {
      nlohmann::json values = nlohmann::json::array();
      const size_t count = is_input ? meta->num_inputs() : meta->num_outputs();
      for (size_t i = 0; i < count; ++i) {
        TteValueInfo info;
        Status status = fill_value_info(*meta, loaded, is_input, i, &info);
        if (!status.ok()) {
          return status;
        }
        std::string tensor_name;
        if (info.tag == TTE_VALUE_TENSOR) {
          auto tensor = is_input ? meta->input_tensor_meta(i) : meta->output_tensor_meta(i);
          tensor_name = std::string(tensor->name());
        }
        values.push_back(value_info_json(info, tensor_name));
      }
      method[is_input ? "inputs" : "outputs"] = std::move(values);
    }
    nlohmann::json backends = nlohmann::json::array();
    for (size_t i = 0; i < meta->num_backends(); ++i) {
      // One entry per delegate there; list each backend once.
      auto backend = meta->get_backend_name(i);
      if (backend.ok() &&
          std::find(backends.begin(), backends.end(), std::string(*backend)) == backends.end()) {
        backends.push_back(*backend);
      }
    }
    method["backends"] = std::move(backends);
    nlohmann::json delegates = nlohmann::json::array();
    auto state = methods.find(name);
    if (state != methods.end()) {
      for (const DelegateRecord& record : state->second->records) {
        nlohmann::json delegate;
        delegate["backend"] = TTE_BACKEND_NAME;
        delegate["provider"] = record.provider;
        nlohmann::json blob = nlohmann::json::parse(record.blob_json, nullptr, false);
        delegate["blob"] = blob.is_discarded() ? nlohmann::json(record.blob_json) : blob;
        nlohmann::json specs = nlohmann::json::array();
        for (const auto& spec : record.compile_specs) {
          nlohmann::json entry;
          entry["key"] = spec.first;
          entry["value"] =
              printable_utf8(spec.second) ? nlohmann::json(spec.second) : nlohmann::json(nullptr);
          entry["value_hex"] = hex_bytes(spec.second);
          specs.push_back(std::move(entry));
        }
        delegate["compile_specs"] = std::move(specs);
        if (!record.error.empty()) {
          delegate["error"] = record.error;
        }
        delegates.push_back(std::move(delegate));
      }
    }
    method["delegates"] = std::move(delegates);
    method_docs.push_back(std::move(method));
  }
  nlohmann::json doc;
  doc["methods"] = std::move(method_docs);
  doc["etdump"] = etdump_enabled;
  // Names come from the file: a damaged one is shown with U+FFFD where its
  // bytes are not UTF-8, rather than failing the whole description.
  *json = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return Status::Ok();
}

}  // namespace tte
