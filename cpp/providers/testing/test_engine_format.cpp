#include "testing/test_engine_format.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/dtypes.h"

#include "torch_tensorrt_executorch/engine_provider.h"

namespace tte::test_engine {
namespace {

using nlohmann::json;

// The kernels switch on these values without ExecuTorch's headers.
using EtType = ::tte::ScalarType;
static_assert(kByte == static_cast<int32_t>(EtType::Byte) &&
                  kChar == static_cast<int32_t>(EtType::Char) &&
                  kShort == static_cast<int32_t>(EtType::Short) &&
                  kInt == static_cast<int32_t>(EtType::Int) &&
                  kLong == static_cast<int32_t>(EtType::Long) &&
                  kHalf == static_cast<int32_t>(EtType::Half) &&
                  kFloat == static_cast<int32_t>(EtType::Float) &&
                  kDouble == static_cast<int32_t>(EtType::Double) &&
                  kBool == static_cast<int32_t>(EtType::Bool) &&
                  kBFloat16 == static_cast<int32_t>(EtType::BFloat16),
              "test-engine ScalarType values must be ExecuTorch's");

// The element types a plan may name, in this order in messages: the types
// the test kernels compute in, described by the library's dtype table.
constexpr const char* kPlanDtypeNames[] = {"float32", "float16", "bfloat16", "float64", "int64",
                                           "int32",   "int16",   "int8",     "uint8",   "bool"};

const std::vector<DtypeInfo>& plan_dtypes() {
  static const std::vector<DtypeInfo> table = [] {
    std::vector<DtypeInfo> out;
    for (const char* name : kPlanDtypeNames) {
      const ::tte::DtypeInfo* entry = ::tte::find_dtype(std::string_view(name));
      out.push_back(
          DtypeInfo{entry->name, static_cast<int32_t>(entry->scalar_type), entry->element_size});
    }
    return out;
  }();
  return table;
}

struct OpName {
  Op op;
  const char* name;
};
constexpr OpName kOps[] = {
    {Op::kAddOne, "add_one"},     {Op::kAdd, "add"},   {Op::kIdentity, "identity"},
    {Op::kKvUpdate, "kv_update"}, {Op::kNull, "null"}, {Op::kKeepPositive, "keep_positive"},
};

// The largest tensor a plan may describe, in bytes: keeps every size and
// offset computation of the providers far from int64 overflow.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 50;

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw PlanError(where.empty() ? what : where + ": " + what);
}

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string join(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string known_dtypes() {
  std::string out;
  for (const DtypeInfo& d : plan_dtypes()) {
    if (!out.empty()) out += ", ";
    out += d.name;
  }
  return out;
}

std::string known_ops() {
  std::string out;
  for (const OpName& o : kOps) {
    if (!out.empty()) out += ", ";
    out += o.name;
  }
  return out;
}

// A short rendering of a JSON value for messages.
std::string show(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

void check_object(const json& v, const std::string& where) {
  if (!v.is_object()) fail(where, "expected a JSON object, got " + show(v));
}

void check_keys(const json& obj, const std::string& where,
                std::initializer_list<const char*> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = std::any_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; });
    if (!ok) {
      fail(where, "unknown key " + in_quotes(it.key()) + " (expected " + join(known) + ")");
    }
  }
}

const json& require(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(where, "missing key " + in_quotes(key));
  return *it;
}

std::string require_string(const json& obj, const char* key, const std::string& where) {
  const json& v = require(obj, key, where);
  if (!v.is_string()) fail(where + "." + key, "expected a string, got " + show(v));
  return v.get<std::string>();
}

// `data_dependent_allowed`: an output's fixed shape, where -1 marks a dim
// known only after the run (keep_positive).
std::vector<int64_t> parse_dims(const json& v, const std::string& where,
                                bool data_dependent_allowed = false) {
  if (!v.is_array()) fail(where, "expected a list of dims, got " + show(v));
  if (v.size() > TTE_MAX_RANK) {
    fail(where, "rank " + std::to_string(v.size()) + " is above the largest the ABI carries (" +
                    std::to_string(TTE_MAX_RANK) + ")");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < v.size(); ++i) {
    const json& d = v[i];
    std::string at = where + "[" + std::to_string(i) + "]";
    if (!d.is_number_integer() ||
        (d.is_number_unsigned() &&
         d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
      fail(at, "expected an integer dim, got " + show(d));
    }
    int64_t value = d.get<int64_t>();
    if (value < 0 && !(data_dependent_allowed && value == -1)) {
      fail(at, "dims are >= 0, got " + std::to_string(value) +
                   " (give dynamic inputs min/opt/max ranges in 'profiles')");
    }
    dims.push_back(value);
  }
  return dims;
}

void check_size(const std::vector<int64_t>& dims, int32_t element_size, const std::string& where) {
  int64_t bytes = element_size;
  for (int64_t d : dims) {
    if (d < 0) continue;  // data-dependent: keep_positive's bound is its input's size
    if (d != 0 && bytes > kMaxTensorBytes / d) {
      fail(where, "the tensor would exceed 2^50 bytes");
    }
    bytes *= d;
  }
}

std::string tensor_where(size_t index, const std::string& name) {
  std::string where = "tensors[" + std::to_string(index) + "]";
  if (!name.empty()) where += " (" + in_quotes(name) + ")";
  return where;
}

void parse_profiles(const json& t, const std::string& where, TensorSpec* spec) {
  const json& profiles = require(t, "profiles", where);
  if (!profiles.is_array() || profiles.empty()) {
    fail(where + ".profiles",
         "expected a non-empty list of {min, opt, max} (one per optimization profile; "
         "a static input has one with min == opt == max), got " +
             show(profiles));
  }
  for (size_t p = 0; p < profiles.size(); ++p) {
    std::string at = where + ".profiles[" + std::to_string(p) + "]";
    const json& pj = profiles[p];
    check_object(pj, at);
    check_keys(pj, at, {"min", "opt", "max"});
    ProfileDims dims;
    dims.min = parse_dims(require(pj, "min", at), at + ".min");
    dims.opt = parse_dims(require(pj, "opt", at), at + ".opt");
    dims.max = parse_dims(require(pj, "max", at), at + ".max");
    if (dims.opt.size() != dims.min.size() || dims.max.size() != dims.min.size()) {
      fail(at, "min, opt and max have ranks " + std::to_string(dims.min.size()) + ", " +
                   std::to_string(dims.opt.size()) + " and " + std::to_string(dims.max.size()) +
                   "; they must be equal");
    }
    if (p > 0 && dims.min.size() != spec->profiles[0].min.size()) {
      fail(at, "rank " + std::to_string(dims.min.size()) + " differs from profile 0's rank " +
                   std::to_string(spec->profiles[0].min.size()));
    }
    for (size_t d = 0; d < dims.min.size(); ++d) {
      if (!(dims.min[d] <= dims.opt[d] && dims.opt[d] <= dims.max[d])) {
        fail(at, "dim " + std::to_string(d) + " needs min <= opt <= max, got " +
                     std::to_string(dims.min[d]) + ", " + std::to_string(dims.opt[d]) + ", " +
                     std::to_string(dims.max[d]));
      }
    }
    check_size(dims.max, spec->dtype->element_size, at + ".max");
    spec->profiles.push_back(std::move(dims));
  }
  spec->rank = static_cast<int32_t>(spec->profiles[0].min.size());
}

bool is_arithmetic(const DtypeInfo* dtype) { return dtype->scalar_type != kBool; }

std::string counted(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// The number of inputs and outputs each op takes, their dtypes, and which
// aliases make sense for it (docs/test-engine-format.md, "Ops").
void check_roles(const Plan& plan) {
  const std::vector<int32_t>& in = plan.inputs;
  const std::vector<int32_t>& out = plan.outputs;
  const char* op = op_name(plan.op);
  auto spec = [&](int32_t index) -> const TensorSpec& { return plan.tensors[index]; };
  auto wrong_count = [&](const char* expected) {
    fail("op", std::string("op '") + op + "' takes " + expected + ", the plan has " +
                   counted(in.size(), "input") + " and " + counted(out.size(), "output"));
  };
  auto same_dtype = [&](int32_t a, int32_t b) {
    if (spec(a).dtype != spec(b).dtype) {
      fail(tensor_where(b, spec(b).name),
           std::string("is ") + spec(b).dtype->name + " but " + in_quotes(spec(a).name) + " is " +
               spec(a).dtype->name + ": op '" + op + "' keeps the dtype");
    }
  };
  auto arithmetic = [&](int32_t a) {
    if (!is_arithmetic(spec(a).dtype)) {
      fail(tensor_where(a, spec(a).name),
           std::string("op '") + op +
               "' does arithmetic; bool tensors are for 'identity' and 'null'");
    }
  };

  switch (plan.op) {
    case Op::kAddOne:
      if (in.size() != 1 || out.size() != 1) wrong_count("1 input and 1 output");
      arithmetic(in[0]);
      same_dtype(in[0], out[0]);
      break;
    case Op::kAdd:
      if (in.size() != 2 || out.size() != 1) wrong_count("2 inputs and 1 output");
      arithmetic(in[0]);
      same_dtype(in[0], in[1]);
      same_dtype(in[0], out[0]);
      break;
    case Op::kIdentity:
      if (in.empty() || in.size() != out.size()) wrong_count("n >= 1 inputs and as many outputs");
      for (size_t i = 0; i < in.size(); ++i) same_dtype(in[i], out[i]);
      break;
    case Op::kKvUpdate:
      if (in.size() != 2 || (out.size() != 1 && out.size() != 2)) {
        wrong_count("2 inputs (cache, x) and 1 or 2 outputs (cache_out[, y])");
      }
      arithmetic(in[0]);
      same_dtype(in[0], in[1]);
      for (int32_t o : out) same_dtype(in[0], o);
      if (spec(out[0]).aliased_input != in[0]) {
        fail("aliases", "op 'kv_update' writes the cache in place: map its first output " +
                            in_quotes(spec(out[0]).name) + " to its first input " +
                            in_quotes(spec(in[0]).name));
      }
      break;
    case Op::kKeepPositive:
      if (in.size() != 1 || out.size() != 1) wrong_count("1 input and 1 output");
      arithmetic(in[0]);
      same_dtype(in[0], out[0]);
      if (spec(in[0]).rank != 1 || spec(out[0]).shape != std::vector<int64_t>{-1}) {
        fail(tensor_where(out[0], spec(out[0]).name),
             "op 'keep_positive' takes a 1-D input and gives a 1-D output of data-dependent size: "
             "give the output \"shape\": [-1]");
      }
      break;
    case Op::kNull:
      break;
  }
  if (plan.op != Op::kKeepPositive) {
    for (int32_t o : out) {
      const std::vector<int64_t>& shape = spec(o).shape;
      if (std::find(shape.begin(), shape.end(), -1) != shape.end()) {
        fail(tensor_where(o, spec(o).name) + ".shape",
             std::string("-1 (a data-dependent dim) is for op 'keep_positive'; op '") + op +
                 "' gives known shapes");
      }
    }
  }

  for (size_t k = 0; k < out.size(); ++k) {
    const TensorSpec& o = spec(out[k]);
    if (o.aliased_input < 0) continue;
    bool allowed = true;
    switch (plan.op) {
      case Op::kAddOne:
      case Op::kAdd:
      case Op::kNull:
        break;
      case Op::kKeepPositive:
        allowed = false;
        break;
      case Op::kIdentity:
        allowed = o.aliased_input == in[k];
        break;
      case Op::kKvUpdate:
        allowed = k == 0;
        break;
    }
    if (!allowed) {
      fail("aliases",
           std::string("op '") + op + "' cannot write output " + in_quotes(o.name) +
               " into input " + in_quotes(spec(o.aliased_input).name) +
               (plan.op == Op::kIdentity ? ": an identity output may alias only its own input"
                                         : ": only the cache output is written in place"));
    }
  }
}

void parse_document(const json& doc, Plan* plan) {
  check_object(doc, "plan");
  if (doc.contains("capturable")) {
    fail("",
         "'capturable' is not part of a test plan: capture is a provider property "
         "(use provider test-cuda-nocapture for an engine that cannot be captured)");
  }
  check_keys(doc, "plan",
             {"op", "tensors", "aliases", "fail", "spin_us", "scratch_bytes", "weight_bytes"});

  std::string op = require_string(doc, "op", "plan");
  auto op_it =
      std::find_if(std::begin(kOps), std::end(kOps), [&](const OpName& o) { return op == o.name; });
  if (op_it == std::end(kOps))
    fail("op", "unknown op " + in_quotes(op) + " (expected " + known_ops() + ")");
  plan->op = op_it->op;

  const json& tensors = require(doc, "tensors", "plan");
  if (!tensors.is_array() || tensors.empty()) {
    fail("tensors", "expected a non-empty list of tensors, got " + show(tensors));
  }
  std::map<std::string, int32_t> by_name;
  std::vector<std::string> shape_of_names(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const json& t = tensors[i];
    std::string where = tensor_where(i, "");
    check_object(t, where);
    TensorSpec spec;
    spec.name = require_string(t, "name", where);
    if (spec.name.empty()) fail(where, "name is empty");
    where = tensor_where(i, spec.name);
    auto [dup, inserted] = by_name.emplace(spec.name, static_cast<int32_t>(i));
    if (!inserted) {
      fail(where,
           "name is also used by tensors[" + std::to_string(dup->second) + "]; names are unique");
    }
    const json& is_input = require(t, "is_input", where);
    if (!is_input.is_boolean())
      fail(where + ".is_input", "expected true or false, got " + show(is_input));
    spec.is_input = is_input.get<bool>();
    std::string dtype = require_string(t, "dtype", where);
    spec.dtype = find_dtype(dtype);
    if (spec.dtype == nullptr) {
      fail(where + ".dtype",
           "unknown dtype " + in_quotes(dtype) + " (expected " + known_dtypes() + ")");
    }

    if (spec.is_input) {
      for (const char* k : {"shape_of", "shape"}) {
        if (t.contains(k)) {
          fail(where,
               std::string("'") + k + "' is for outputs; an input's shape comes from 'profiles'");
        }
      }
      check_keys(t, where, {"name", "is_input", "dtype", "profiles"});
      parse_profiles(t, where, &spec);
      plan->inputs.push_back(static_cast<int32_t>(i));
    } else {
      if (t.contains("profiles"))
        fail(where, "'profiles' is for inputs; give an output 'shape_of' or 'shape'");
      check_keys(t, where, {"name", "is_input", "dtype", "shape_of", "shape"});
      bool has_shape_of = t.contains("shape_of");
      if (has_shape_of == t.contains("shape")) {
        fail(where,
             "an output has exactly one of 'shape_of' (an input's name) or 'shape' (fixed dims)");
      }
      if (has_shape_of) {
        shape_of_names[i] = require_string(t, "shape_of", where);
        if (shape_of_names[i].empty()) fail(where + ".shape_of", "is empty; name an input");
      } else {
        spec.shape = parse_dims(t["shape"], where + ".shape", true);
        check_size(spec.shape, spec.dtype->element_size, where + ".shape");
        spec.rank = static_cast<int32_t>(spec.shape.size());
      }
      plan->outputs.push_back(static_cast<int32_t>(i));
    }
    plan->tensors.push_back(std::move(spec));
  }

  for (size_t i = 0; i < plan->tensors.size(); ++i) {
    TensorSpec& spec = plan->tensors[i];
    if (shape_of_names[i].empty()) continue;  // an input, or a fixed shape
    std::string where = tensor_where(i, spec.name) + ".shape_of";
    auto it = by_name.find(shape_of_names[i]);
    if (it == by_name.end())
      fail(where, in_quotes(shape_of_names[i]) + " names no tensor of this plan");
    const TensorSpec& source = plan->tensors[it->second];
    if (!source.is_input)
      fail(where, in_quotes(shape_of_names[i]) + " is an output; shape_of names an input");
    spec.shape_of = it->second;
    spec.rank = source.rank;
  }

  if (!plan->inputs.empty()) {
    const TensorSpec& first = plan->tensors[plan->inputs[0]];
    plan->num_profiles = static_cast<int32_t>(first.profiles.size());
    for (int32_t index : plan->inputs) {
      const TensorSpec& spec = plan->tensors[index];
      if (static_cast<int32_t>(spec.profiles.size()) != plan->num_profiles) {
        fail(tensor_where(index, spec.name) + ".profiles",
             "has " + counted(spec.profiles.size(), "profile") + " but " + in_quotes(first.name) +
                 " has " + std::to_string(plan->num_profiles) +
                 ": every input has one entry per optimization profile");
      }
    }
  }

  if (auto it = doc.find("aliases"); it != doc.end()) {
    const json& aliases = *it;
    check_object(aliases, "aliases");
    std::map<int32_t, std::string> aliased_by;
    for (auto a = aliases.begin(); a != aliases.end(); ++a) {
      std::string where = "aliases." + a.key();
      if (!a.value().is_string()) fail(where, "expected an input name, got " + show(a.value()));
      std::string input_name = a.value().get<std::string>();
      auto out_it = by_name.find(a.key());
      if (out_it == by_name.end())
        fail(where, in_quotes(a.key()) + " names no tensor of this plan");
      TensorSpec& output = plan->tensors[out_it->second];
      if (output.is_input) fail(where, in_quotes(a.key()) + " is an input; alias keys are outputs");
      auto in_it = by_name.find(input_name);
      if (in_it == by_name.end())
        fail(where, in_quotes(input_name) + " names no tensor of this plan");
      const TensorSpec& input = plan->tensors[in_it->second];
      if (!input.is_input)
        fail(where, in_quotes(input_name) + " is an output; alias values are inputs");
      if (output.dtype != input.dtype) {
        fail(where, std::string("output is ") + output.dtype->name + " but input is " +
                        input.dtype->name + "; an output written in place has its input's dtype");
      }
      if (output.shape_of != in_it->second) {
        fail(where, "an output written in place has its input's shape: give " +
                        in_quotes(output.name) + " \"shape_of\": \"" + input_name + "\"");
      }
      auto [prev, inserted] = aliased_by.emplace(in_it->second, a.key());
      if (!inserted) {
        fail(where, "input " + in_quotes(input_name) + " is already written in place by " +
                        in_quotes(prev->second));
      }
      output.aliased_input = in_it->second;
    }
  }

  if (auto it = doc.find("fail"); it != doc.end()) {
    check_object(*it, "fail");
    check_keys(*it, "fail", {"deserialize", "enqueue"});
    for (auto f = it->begin(); f != it->end(); ++f) {
      if (!f.value().is_string())
        fail("fail." + f.key(), "expected a message string, got " + show(f.value()));
    }
    if (it->contains("deserialize"))
      plan->fail_deserialize = (*it)["deserialize"].get<std::string>();
    if (it->contains("enqueue")) plan->fail_enqueue = (*it)["enqueue"].get<std::string>();
  }

  if (auto it = doc.find("spin_us"); it != doc.end()) {
    const json& spin = *it;
    if (!spin.is_number_integer() || spin.get<int64_t>() < 0 ||
        (spin.is_number_unsigned() && spin.get<uint64_t>() > static_cast<uint64_t>(kMaxSpinUs)) ||
        spin.get<int64_t>() > kMaxSpinUs) {
      fail("spin_us",
           "expected microseconds from 0 to " + std::to_string(kMaxSpinUs) + ", got " + show(spin));
    }
    plan->spin_us = spin.get<int64_t>();
  }

  auto bytes_value = [](const json& value, const std::string& where) -> int64_t {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        (value.is_number_unsigned() &&
         value.get<uint64_t>() > static_cast<uint64_t>(kMaxMemoryBytes)) ||
        value.get<int64_t>() > kMaxMemoryBytes) {
      fail(where,
           "expected bytes from 0 to " + std::to_string(kMaxMemoryBytes) + ", got " + show(value));
    }
    return value.get<int64_t>();
  };
  plan->scratch_bytes.assign(static_cast<size_t>(plan->num_profiles), 0);
  if (auto it = doc.find("scratch_bytes"); it != doc.end()) {
    if (it->is_array()) {
      if (it->size() != static_cast<size_t>(plan->num_profiles)) {
        fail("scratch_bytes", "expected one size per profile (" +
                                  std::to_string(plan->num_profiles) + "), got " +
                                  std::to_string(it->size()));
      }
      for (size_t p = 0; p < it->size(); ++p) {
        plan->scratch_bytes[p] = bytes_value((*it)[p], "scratch_bytes[" + std::to_string(p) + "]");
      }
    } else {
      plan->scratch_bytes.assign(static_cast<size_t>(plan->num_profiles),
                                 bytes_value(*it, "scratch_bytes"));
    }
  }
  if (auto it = doc.find("weight_bytes"); it != doc.end()) {
    plan->weight_bytes = bytes_value(*it, "weight_bytes");
  }

  check_roles(*plan);
}

// The end of the JSON object that starts `[begin, end)` (after leading
// whitespace): one past its closing brace, found by counting brackets outside
// strings. nullptr when the text does not start with an object or the object
// is not closed; the JSON parser then reports what is wrong.
const char* document_end(const char* begin, const char* end) {
  const char* p = begin;
  while (p < end && std::isspace(static_cast<unsigned char>(*p))) ++p;
  if (p == end || *p != '{') return nullptr;
  int64_t depth = 0;
  bool in_string = false;
  for (; p < end; ++p) {
    const char c = *p;
    if (in_string) {
      if (c == '\\') {
        ++p;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return p + 1;
    }
  }
  return nullptr;
}

// The first byte of `[begin, end)` that is not JSON whitespace, or `end`.
// Sixty-four bytes at a time while they are all spaces (the padding's common
// case), with no branch inside a block: this runs over megabytes of padding
// at about the speed of copying them.
const char* first_non_whitespace(const char* begin, const char* end) {
  constexpr uint64_t kSpaces = 0x2020202020202020ull;
  constexpr size_t kBlock = 64;
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  const char* p = begin;
  while (p < end) {
    const size_t left = static_cast<size_t>(end - p);
    if (left >= kBlock) {
      uint64_t differs = 0;
      for (size_t i = 0; i < kBlock; i += sizeof(uint64_t)) {
        uint64_t word;
        std::memcpy(&word, p + i, sizeof(word));
        differs |= word ^ kSpaces;
      }
      if (differs == 0) {
        p += kBlock;
        continue;
      }
    }
    // A block with other bytes (or the tail): byte by byte.
    const char* block_end = p + (left < kBlock ? left : kBlock);
    for (; p < block_end; ++p) {
      if (!is_space(*p)) return p;
    }
  }
  return end;
}

}  // namespace

const DtypeInfo* find_dtype(std::string_view name) {
  for (const DtypeInfo& d : plan_dtypes()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

const DtypeInfo* find_dtype(int32_t scalar_type) {
  for (const DtypeInfo& d : plan_dtypes()) {
    if (scalar_type == d.scalar_type) return &d;
  }
  return nullptr;
}

const char* op_name(Op op) {
  for (const OpName& o : kOps) {
    if (o.op == op) return o.name;
  }
  return "?";
}

bool has_magic(const void* data, uint64_t size) { return is_test_engine_plan(data, size); }

ParseStatus parse_plan(const void* data, uint64_t size, Plan* plan, std::string* error) {
  if (!has_magic(data, size)) return ParseStatus::kNotTestPlan;
  const char* begin = static_cast<const char*>(data) + kMagicSize;
  const char* end = static_cast<const char*>(data) + size;
  // What follows the document must be whitespace (padding: large engines in
  // tests are plans padded with spaces). The document's end is found by
  // scanning its brackets, and only the document is handed to the JSON lexer,
  // which keeps every character it reads: trimming or lexing the padding
  // byte by byte would cost more than reading the file.
  const char* doc_end = document_end(begin, end);
  if (doc_end != nullptr) {
    if (const char* junk = first_non_whitespace(doc_end, end); junk != end) {
      if (error != nullptr) {
        *error =
            "invalid test-engine plan: the JSON after the magic does not parse: characters "
            "after the document, at byte " +
            std::to_string(kMagicSize + static_cast<uint64_t>(junk - begin)) +
            " (only whitespace may follow it)";
      }
      return ParseStatus::kInvalid;
    }
    end = doc_end;
  }
  Plan parsed;
  try {
    json doc;
    try {
      doc = json::parse(begin, end);
    } catch (const json::parse_error& e) {
      throw PlanError(std::string("the JSON after the magic does not parse: ") + e.what());
    }
    parse_document(doc, &parsed);
  } catch (const PlanError& e) {
    if (error != nullptr) *error = std::string("invalid test-engine plan: ") + e.what();
    return ParseStatus::kInvalid;
  } catch (const json::exception& e) {
    if (error != nullptr) *error = std::string("invalid test-engine plan: ") + e.what();
    return ParseStatus::kInvalid;
  }
  *plan = std::move(parsed);
  return ParseStatus::kOk;
}

}  // namespace tte::test_engine
