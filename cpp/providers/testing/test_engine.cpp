#include "testing/test_engine.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace tte::test_engine {
namespace {

std::string dims_text(const int64_t* dims, size_t rank) {
  std::string out = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

std::string dims_text(const std::vector<int64_t>& dims) { return dims_text(dims.data(), dims.size()); }

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string describe(const TensorSpec& spec, int32_t index) {
  return std::string(spec.is_input ? "input '" : "output '") + spec.name + "' (index " +
         std::to_string(index) + ")";
}

struct Counters {
  std::atomic<uint64_t> deserializes{0};
  std::atomic<uint64_t> destroys{0};
  std::atomic<uint64_t> enqueues{0};
  std::atomic<uint64_t> select_profiles{0};
  std::atomic<int32_t> last_device_id{-1};
  std::atomic<int32_t> last_profile{-1};
  std::atomic<int32_t> last_has_weight_streaming_budget{0};
  std::atomic<int64_t> last_weight_streaming_budget{0};
  std::atomic<void*> last_stream{nullptr};
};

Counters& counters() {
  static Counters c;
  return c;
}

// ---- The ABI functions both providers share --------------------------------

TteStatus check_engine(TteEngine* engine, TteError* error) {
  if (engine == nullptr) return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "engine handle is NULL");
  return TTE_OK;
}

TteStatus abi_num_io_tensors(TteEngine* engine, int32_t* out_count, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->num_io_tensors(out_count, error); });
}

TteStatus abi_describe_io_tensor(TteEngine* engine, int32_t index, TteIoTensorDesc* out_desc,
                                 TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->describe_io_tensor(index, out_desc, error); });
}

TteStatus abi_num_profiles(TteEngine* engine, int32_t* out_count, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->num_profiles(out_count, error); });
}

TteStatus abi_profile_shape(TteEngine* engine, int32_t profile, int32_t input_index, int64_t* min_dims,
                            int64_t* opt_dims, int64_t* max_dims, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] {
    return from_handle(engine)->profile_shape(profile, input_index, min_dims, opt_dims, max_dims, error);
  });
}

TteStatus abi_select_profile(TteEngine* engine, int32_t profile, void* /*stream*/, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->select_profile(profile, error); });
}

TteStatus abi_set_input_shape(TteEngine* engine, int32_t index, const int64_t* dims, int32_t rank,
                              TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->set_input_shape(index, dims, rank, error); });
}

TteStatus abi_get_output_shape(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                               int32_t* out_rank, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error,
                 [&] { return from_handle(engine)->get_output_shape(index, dims, capacity, out_rank, error); });
}

TteStatus abi_set_tensor_address(TteEngine* engine, int32_t index, void* address, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->set_tensor_address(index, address, error); });
}

void abi_destroy(TteEngine* engine) {
  if (engine == nullptr) return;
  delete from_handle(engine);
  counters().destroys.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

TteStatus set_error(TteError* error, TteStatus code, const std::string& message) {
  if (error != nullptr) {
    error->code = code;
    size_t n = std::min(message.size(), static_cast<size_t>(TTE_ERROR_MESSAGE_CAPACITY - 1));
    std::memcpy(error->message, message.data(), n);
    error->message[n] = '\0';
  }
  return code;
}

TteStatus parse_for_deserialize(const char* provider, const void* plan, uint64_t plan_size, Plan* out,
                                TteError* error) {
  std::string message;
  switch (parse_plan(plan, plan_size, out, &message)) {
    case ParseStatus::kOk:
      return TTE_OK;
    case ParseStatus::kNotTestPlan:
      return set_error(error, TTE_ERROR_NOT_ACCEPTED,
                       std::string(provider) + " accepts only test-engine plans (magic TTE-TEST-ENGINE)");
    case ParseStatus::kInvalid:
      break;
  }
  return set_error(error, TTE_ERROR_INVALID_PROGRAM, message);
}

LoadOptions read_load_options(const TteEngineLoadOptions* options) {
  LoadOptions out;
  if (options == nullptr) return out;
  auto has = [&](size_t end_of_field) { return options->struct_size >= end_of_field; };
  if (has(offsetof(TteEngineLoadOptions, device_id) + sizeof(options->device_id))) {
    out.device_id = options->device_id;
  }
  if (has(offsetof(TteEngineLoadOptions, weight_streaming_budget) + sizeof(options->weight_streaming_budget))) {
    out.has_weight_streaming_budget = options->has_weight_streaming_budget != 0;
    out.weight_streaming_budget = options->weight_streaming_budget;
  }
  return out;
}

Engine::Engine(Plan plan) : plan_(std::move(plan)) {
  size_t n = plan_.tensors.size();
  shapes_.resize(n);
  for (size_t i = 0; i < n; ++i) shapes_[i].reserve(plan_.tensors[i].rank);
  shape_set_.assign(n, 0);
  addresses_.assign(n, nullptr);
  address_set_.assign(n, 0);
  bound_.assign(n, nullptr);
  numel_.assign(n, 0);
}

TteStatus Engine::check_index(int32_t index, const char* call, TteError* error) const {
  if (index < 0 || index >= static_cast<int32_t>(plan_.tensors.size())) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     std::string(call) + ": I/O index " + std::to_string(index) + " is out of range; the engine has " +
                         std::to_string(plan_.tensors.size()) + " I/O tensors");
  }
  return TTE_OK;
}

TteStatus Engine::num_io_tensors(int32_t* out_count, TteError* error) const {
  if (out_count == nullptr) return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "num_io_tensors: out_count is NULL");
  *out_count = static_cast<int32_t>(plan_.tensors.size());
  return TTE_OK;
}

TteStatus Engine::describe_io_tensor(int32_t index, TteIoTensorDesc* out_desc, TteError* error) const {
  if (TteStatus s = check_index(index, "describe_io_tensor", error)) return s;
  if (out_desc == nullptr) return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "describe_io_tensor: out_desc is NULL");
  const TensorSpec& spec = plan_.tensors[index];
  out_desc->name = spec.name.c_str();
  out_desc->is_input = spec.is_input ? 1 : 0;
  out_desc->scalar_type = spec.dtype->scalar_type;
  out_desc->rank = spec.rank;
  out_desc->aliased_input = spec.aliased_input;
  out_desc->is_shape_tensor = 0;
  return TTE_OK;
}

TteStatus Engine::num_profiles(int32_t* out_count, TteError* error) const {
  if (out_count == nullptr) return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "num_profiles: out_count is NULL");
  *out_count = plan_.num_profiles;
  return TTE_OK;
}

TteStatus Engine::profile_shape(int32_t profile, int32_t input_index, int64_t* min_dims, int64_t* opt_dims,
                                int64_t* max_dims, TteError* error) const {
  if (TteStatus s = check_index(input_index, "profile_shape", error)) return s;
  const TensorSpec& spec = plan_.tensors[input_index];
  if (!spec.is_input) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "profile_shape: " + describe(spec, input_index) + " is an output; profiles describe inputs");
  }
  if (profile < 0 || profile >= plan_.num_profiles) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "profile_shape: profile " + std::to_string(profile) + " is out of range; the engine has " +
                         std::to_string(plan_.num_profiles));
  }
  if (spec.rank > 0 && (min_dims == nullptr || opt_dims == nullptr || max_dims == nullptr)) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "profile_shape: a dims array is NULL");
  }
  const ProfileDims& p = spec.profiles[profile];
  std::copy(p.min.begin(), p.min.end(), min_dims);
  std::copy(p.opt.begin(), p.opt.end(), opt_dims);
  std::copy(p.max.begin(), p.max.end(), max_dims);
  return TTE_OK;
}

TteStatus Engine::select_profile(int32_t profile, TteError* error) {
  if (profile < 0 || profile >= plan_.num_profiles) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "select_profile: profile " + std::to_string(profile) + " is out of range; the engine has " +
                         std::to_string(plan_.num_profiles));
  }
  profile_ = profile;
  std::fill(shape_set_.begin(), shape_set_.end(), 0);
  counters().select_profiles.fetch_add(1, std::memory_order_relaxed);
  counters().last_profile.store(profile, std::memory_order_relaxed);
  return TTE_OK;
}

TteStatus Engine::set_input_shape(int32_t index, const int64_t* dims, int32_t rank, TteError* error) {
  if (TteStatus s = check_index(index, "set_input_shape", error)) return s;
  const TensorSpec& spec = plan_.tensors[index];
  if (!spec.is_input) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "set_input_shape: " + describe(spec, index) + " is an output; set shapes of inputs");
  }
  if (rank != spec.rank) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "set_input_shape: " + describe(spec, index) + " has rank " + std::to_string(spec.rank) +
                         ", got " + std::to_string(rank) + " dims");
  }
  if (rank > 0 && dims == nullptr) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "set_input_shape: dims is NULL");
  }
  const ProfileDims& p = spec.profiles[profile_];
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] < p.min[d] || dims[d] > p.max[d]) {
      return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                       "set_input_shape: " + describe(spec, index) + " shape " + dims_text(dims, rank) +
                           " is outside profile " + std::to_string(profile_) + ": dim " + std::to_string(d) +
                           " must be in [" + std::to_string(p.min[d]) + ", " + std::to_string(p.max[d]) + "]");
    }
  }
  shapes_[index].assign(dims, dims + rank);
  shape_set_[index] = 1;
  return TTE_OK;
}

const std::vector<int64_t>& Engine::current_shape(int32_t index) const {
  const TensorSpec& spec = plan_.tensors[index];
  if (spec.is_input) return shapes_[index];
  return spec.shape_of >= 0 ? shapes_[spec.shape_of] : spec.shape;
}

std::string Engine::unset_inputs() const {
  std::string names;
  for (int32_t i : plan_.inputs) {
    if (shape_set_[i]) continue;
    if (!names.empty()) names += ", ";
    names += "'" + plan_.tensors[i].name + "'";
  }
  return names;
}

TteStatus Engine::get_output_shape(int32_t index, int64_t* dims, int32_t capacity, int32_t* out_rank,
                                   TteError* error) const {
  if (TteStatus s = check_index(index, "get_output_shape", error)) return s;
  const TensorSpec& spec = plan_.tensors[index];
  if (spec.is_input) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "get_output_shape: " + describe(spec, index) + " is an input; ask for an output");
  }
  std::string unset = unset_inputs();
  if (!unset.empty()) {
    return set_error(error, TTE_ERROR_INVALID_STATE,
                     "get_output_shape: set every input shape first (after select_profile too); not set: " + unset);
  }
  if (out_rank == nullptr) return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "get_output_shape: out_rank is NULL");
  *out_rank = spec.rank;
  if (capacity < spec.rank || (spec.rank > 0 && dims == nullptr)) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "get_output_shape: " + describe(spec, index) + " has rank " + std::to_string(spec.rank) +
                         " but dims holds " + std::to_string(dims == nullptr ? 0 : capacity));
  }
  const std::vector<int64_t>& shape = current_shape(index);
  std::copy(shape.begin(), shape.end(), dims);
  return TTE_OK;
}

TteStatus Engine::check_address(int32_t, void*, TteError*) { return TTE_OK; }

TteStatus Engine::set_tensor_address(int32_t index, void* address, TteError* error) {
  if (TteStatus s = check_index(index, "set_tensor_address", error)) return s;
  if (address != nullptr && !(address_set_[index] && addresses_[index] == address)) {
    if (TteStatus s = check_address(index, address, error)) return s;
  }
  addresses_[index] = address;
  address_set_[index] = 1;
  return TTE_OK;
}

TteStatus Engine::check_elementwise(int32_t output, int32_t input, TteError* error) const {
  if (numel_[output] != numel_[input]) {
    return set_error(error, TTE_ERROR_RUNTIME,
                     std::string("enqueue: op '") + op_name(plan_.op) + "' is elementwise, but " +
                         describe(plan_.tensors[output], output) + " has shape " + dims_text(current_shape(output)) +
                         " and " + describe(plan_.tensors[input], input) + " has shape " +
                         dims_text(current_shape(input)));
  }
  return TTE_OK;
}

TteStatus Engine::check_same_shape(int32_t a, int32_t b, TteError* error) const {
  if (shapes_[a] != shapes_[b]) {
    return set_error(error, TTE_ERROR_RUNTIME,
                     std::string("enqueue: op '") + op_name(plan_.op) + "' needs inputs '" + plan_.tensors[a].name +
                         "' and '" + plan_.tensors[b].name + "' of one shape, got " + dims_text(shapes_[a]) +
                         " and " + dims_text(shapes_[b]));
  }
  return TTE_OK;
}

TteStatus Engine::prepare_enqueue(TteError* error) {
  if (!plan_.fail_enqueue.empty()) return set_error(error, TTE_ERROR_RUNTIME, plan_.fail_enqueue);
  if (!unset_inputs().empty()) {
    return set_error(error, TTE_ERROR_INVALID_STATE,
                     "enqueue: set every input shape first (after select_profile too); not set: " + unset_inputs());
  }
  for (size_t i = 0; i < plan_.tensors.size(); ++i) numel_[i] = product(current_shape(static_cast<int32_t>(i)));

  for (size_t i = 0; i < plan_.tensors.size(); ++i) {
    const TensorSpec& spec = plan_.tensors[i];
    int32_t index = static_cast<int32_t>(i);
    if (spec.aliased_input >= 0) {
      void* input_address = addresses_[spec.aliased_input];
      if (address_set_[i] && addresses_[i] != input_address) {
        return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                         "enqueue: " + describe(spec, index) + " is written in place into input '" +
                             plan_.tensors[spec.aliased_input].name +
                             "', so its address must be that input's (or left unset)");
      }
      bound_[i] = input_address;
    } else {
      bound_[i] = addresses_[i];
    }
    if (numel_[i] > 0 && bound_[i] == nullptr) {
      return set_error(error, TTE_ERROR_INVALID_STATE,
                       "enqueue: no address set for " + describe(spec, index) +
                           "; call set_tensor_address for every I/O tensor first");
    }
  }

  const std::vector<int32_t>& in = plan_.inputs;
  const std::vector<int32_t>& out = plan_.outputs;
  TteStatus s = TTE_OK;
  switch (plan_.op) {
    case Op::kAddOne:
      s = check_elementwise(out[0], in[0], error);
      break;
    case Op::kAdd:
      if (!(s = check_same_shape(in[0], in[1], error))) s = check_elementwise(out[0], in[0], error);
      break;
    case Op::kIdentity:
      for (size_t k = 0; k < in.size() && s == TTE_OK; ++k) s = check_elementwise(out[k], in[k], error);
      break;
    case Op::kKvUpdate:
      if (!(s = check_same_shape(in[0], in[1], error)) && out.size() > 1) s = check_elementwise(out[1], in[0], error);
      break;
    case Op::kNull:
      break;
  }
  return s;
}

void set_common_functions(TteEngineProvider* provider) {
  provider->abi_version = TTE_ENGINE_PROVIDER_ABI_VERSION;
  provider->struct_size = sizeof(TteEngineProvider);
  provider->user_data = nullptr;
  provider->release = nullptr;
  provider->num_io_tensors = abi_num_io_tensors;
  provider->describe_io_tensor = abi_describe_io_tensor;
  provider->num_profiles = abi_num_profiles;
  provider->profile_shape = abi_profile_shape;
  provider->select_profile = abi_select_profile;
  provider->set_input_shape = abi_set_input_shape;
  provider->get_output_shape = abi_get_output_shape;
  provider->set_tensor_address = abi_set_tensor_address;
  provider->destroy = abi_destroy;
}

void record_deserialize(const LoadOptions& options) {
  Counters& c = counters();
  c.last_device_id.store(options.device_id, std::memory_order_relaxed);
  c.last_has_weight_streaming_budget.store(options.has_weight_streaming_budget ? 1 : 0, std::memory_order_relaxed);
  c.last_weight_streaming_budget.store(options.weight_streaming_budget, std::memory_order_relaxed);
  c.deserializes.fetch_add(1, std::memory_order_relaxed);
}

void record_enqueue(void* stream) {
  counters().last_stream.store(stream, std::memory_order_relaxed);
  counters().enqueues.fetch_add(1, std::memory_order_relaxed);
}

void read_stats(TteTestProviderStats* out) {
  if (out == nullptr) return;
  const Counters& c = counters();
  TteTestProviderStats stats{};
  stats.struct_size = sizeof(TteTestProviderStats);
  stats.last_device_id = c.last_device_id.load(std::memory_order_relaxed);
  stats.deserializes = c.deserializes.load(std::memory_order_relaxed);
  stats.destroys = c.destroys.load(std::memory_order_relaxed);
  stats.enqueues = c.enqueues.load(std::memory_order_relaxed);
  stats.select_profiles = c.select_profiles.load(std::memory_order_relaxed);
  stats.last_stream = c.last_stream.load(std::memory_order_relaxed);
  stats.last_profile = c.last_profile.load(std::memory_order_relaxed);
  stats.last_has_weight_streaming_budget = c.last_has_weight_streaming_budget.load(std::memory_order_relaxed);
  stats.last_weight_streaming_budget = c.last_weight_streaming_budget.load(std::memory_order_relaxed);
  size_t n = std::min(static_cast<size_t>(out->struct_size), sizeof(stats));
  if (n < sizeof(stats.struct_size)) return;
  stats.struct_size = static_cast<uint32_t>(n);
  std::memcpy(out, &stats, n);
}

void reset_stats() {
  Counters& c = counters();
  c.deserializes = 0;
  c.destroys = 0;
  c.enqueues = 0;
  c.select_profiles = 0;
  c.last_device_id = -1;
  c.last_profile = -1;
  c.last_has_weight_streaming_budget = 0;
  c.last_weight_streaming_budget = 0;
  c.last_stream = nullptr;
}

}  // namespace tte::test_engine
