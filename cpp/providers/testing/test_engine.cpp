#include "testing/test_engine.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "common/text.h"

namespace tte::test_engine {
namespace {

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
  std::atomic<uint64_t> executes{0};
  std::atomic<uint64_t> input_shapes_set{0};
  std::atomic<int32_t> last_device_id{-1};
  std::atomic<int32_t> last_profile{-1};
  std::atomic<int32_t> last_has_weight_streaming_budget{0};
  std::atomic<int64_t> last_weight_streaming_budget{0};
  std::atomic<void*> last_stream{nullptr};
  std::atomic<uint64_t> execution_contexts{0};
  std::atomic<uint64_t> device_memory_sets{0};
  std::atomic<int64_t> live_weight_bytes{0};
  std::atomic<int64_t> live_own_scratch_bytes{0};
  std::atomic<uint64_t> max_profile_overlap{0};
  // Enqueues running now, per deserialized engine (its shared state) and profile.
  std::mutex in_flight_mutex;
  std::map<std::pair<const void*, int32_t>, uint64_t> in_flight;
};

Counters& counters() {
  static Counters c;
  return c;
}

// ---- The ABI functions both providers share --------------------------------

TteStatus check_engine(TteEngine* engine, TteError* error) {
  if (engine == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "engine handle is NULL");
  return TTE_OK;
}

TteStatus abi_num_io_tensors(TteEngine* engine, int32_t* out_count, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->num_io_tensors(out_count, error); });
}

TteStatus abi_describe_io_tensor(TteEngine* engine, int32_t index, TteIoTensorDesc* out_desc,
                                 TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error,
                 [&] { return from_handle(engine)->describe_io_tensor(index, out_desc, error); });
}

TteStatus abi_num_profiles(TteEngine* engine, int32_t* out_count, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->num_profiles(out_count, error); });
}

TteStatus abi_profile_shape(TteEngine* engine, int32_t profile, int32_t input_index,
                            int64_t* min_dims, int64_t* opt_dims, int64_t* max_dims,
                            TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] {
    return from_handle(engine)->profile_shape(profile, input_index, min_dims, opt_dims, max_dims,
                                              error);
  });
}

TteStatus abi_select_profile(TteEngine* engine, int32_t profile, void* /*stream*/,
                             TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] { return from_handle(engine)->select_profile(profile, error); });
}

TteStatus abi_set_input_shape(TteEngine* engine, int32_t index, const int64_t* dims, int32_t rank,
                              TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error,
                 [&] { return from_handle(engine)->set_input_shape(index, dims, rank, error); });
}

TteStatus abi_get_output_shape(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                               int32_t* out_rank, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] {
    return from_handle(engine)->get_output_shape(index, dims, capacity, out_rank, error);
  });
}

TteStatus abi_set_tensor_address(TteEngine* engine, int32_t index, void* address, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error,
                 [&] { return from_handle(engine)->set_tensor_address(index, address, error); });
}

TteStatus abi_device_memory_size(TteEngine* engine, int32_t profile, int64_t* out_bytes,
                                 TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(
      error, [&] { return from_handle(engine)->device_memory_size(profile, out_bytes, error); });
}

TteStatus abi_set_device_memory(TteEngine* engine, void* memory, int64_t bytes, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error,
                 [&] { return from_handle(engine)->set_device_memory(memory, bytes, error); });
}

TteStatus abi_set_output_capacity(TteEngine* engine, int32_t index, int64_t bytes,
                                  TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error,
                 [&] { return from_handle(engine)->set_output_capacity(index, bytes, error); });
}

TteStatus abi_get_output_result(TteEngine* engine, int32_t index, int64_t* dims, int32_t capacity,
                                int32_t* out_rank, void** out_data, TteError* error) {
  if (TteStatus s = check_engine(engine, error)) return s;
  return guarded(error, [&] {
    return from_handle(engine)->get_output_result(index, dims, capacity, out_rank, out_data, error);
  });
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

TteStatus parse_for_deserialize(const char* provider, const void* plan, uint64_t plan_size,
                                Plan* out, TteError* error) {
  std::string message;
  switch (parse_plan(plan, plan_size, out, &message)) {
    case ParseStatus::kOk:
      return TTE_OK;
    case ParseStatus::kNotTestPlan:
      return set_error(
          error, TTE_ERROR_NOT_ACCEPTED,
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
  if (has(offsetof(TteEngineLoadOptions, weight_streaming_budget) +
          sizeof(options->weight_streaming_budget))) {
    out.has_weight_streaming_budget = options->has_weight_streaming_budget != 0;
    out.weight_streaming_budget = options->weight_streaming_budget;
  }
  if (has(offsetof(TteEngineLoadOptions, user_managed_device_memory) +
          sizeof(options->user_managed_device_memory))) {
    out.user_managed_device_memory = options->user_managed_device_memory != 0;
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
  output_capacity_.assign(n, 0);
  result_count_.assign(n, -1);
  result_data_.assign(n, nullptr);
}

bool Engine::data_dependent(int32_t index) const {
  const TensorSpec& spec = plan_.tensors[index];
  return !spec.is_input && spec.shape_of < 0 &&
         std::find(spec.shape.begin(), spec.shape.end(), -1) != spec.shape.end();
}

TteStatus Engine::set_output_capacity(int32_t index, int64_t bytes, TteError* error) {
  if (TteStatus s = check_index(index, "set_output_capacity", error)) return s;
  if (!data_dependent(index)) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "set_output_capacity: " + describe(plan_.tensors[index], index) +
                         " has a known shape; only data-dependent outputs take a capacity");
  }
  if (bytes < 0) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "set_output_capacity: " + std::to_string(bytes) + " bytes is negative");
  }
  output_capacity_[index] = bytes;
  return TTE_OK;
}

TteStatus Engine::get_output_result(int32_t index, int64_t* dims, int32_t capacity,
                                    int32_t* out_rank, void** out_data, TteError* error) const {
  if (TteStatus s = check_index(index, "get_output_result", error)) return s;
  if (!data_dependent(index)) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "get_output_result: " + describe(plan_.tensors[index], index) +
                         " has a known shape; ask get_output_shape");
  }
  if (result_count_[index] < 0) {
    return set_error(error, TTE_ERROR_INVALID_STATE,
                     "get_output_result: " + describe(plan_.tensors[index], index) +
                         " has no result: enqueue first");
  }
  if (out_rank == nullptr || out_data == nullptr || dims == nullptr || capacity < 1) {
    return set_error(
        error, TTE_ERROR_INVALID_ARGUMENT,
        "get_output_result: out_rank, out_data or dims is NULL, or dims holds less than rank 1");
  }
  *out_rank = 1;
  dims[0] = result_count_[index];
  *out_data = result_data_[index];
  return TTE_OK;
}

int64_t Engine::request_bytes(int32_t index) const {
  const int32_t input = plan_.inputs[0];
  return std::max<int64_t>(1, product(shapes_[input]) * plan_.tensors[index].dtype->element_size);
}

void* Engine::output_memory(int32_t index, int64_t bytes,
                            const std::function<std::shared_ptr<void>(int64_t)>& allocate) {
  if (bytes <= output_capacity_[index] && addresses_[index] != nullptr) return addresses_[index];
  if (own_output_bytes_ < bytes) {
    own_output_.reset();  // the old block goes before the new one comes
    own_output_bytes_ = 0;
    own_output_ = allocate(bytes);
    own_output_bytes_ = bytes;
  }
  return own_output_.get();
}

void Engine::set_result(int32_t index, int64_t count, void* data) {
  result_count_[index] = count;
  result_data_[index] = data;
}

TteStatus Engine::check_index(int32_t index, const char* call, TteError* error) const {
  if (index < 0 || index >= static_cast<int32_t>(plan_.tensors.size())) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     std::string(call) + ": I/O index " + std::to_string(index) +
                         " is out of range; the engine has " +
                         std::to_string(plan_.tensors.size()) + " I/O tensors");
  }
  return TTE_OK;
}

TteStatus Engine::num_io_tensors(int32_t* out_count, TteError* error) const {
  if (out_count == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "num_io_tensors: out_count is NULL");
  *out_count = static_cast<int32_t>(plan_.tensors.size());
  return TTE_OK;
}

TteStatus Engine::describe_io_tensor(int32_t index, TteIoTensorDesc* out_desc,
                                     TteError* error) const {
  if (TteStatus s = check_index(index, "describe_io_tensor", error)) return s;
  if (out_desc == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "describe_io_tensor: out_desc is NULL");
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
  if (out_count == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "num_profiles: out_count is NULL");
  *out_count = plan_.num_profiles;
  return TTE_OK;
}

TteStatus Engine::profile_shape(int32_t profile, int32_t input_index, int64_t* min_dims,
                                int64_t* opt_dims, int64_t* max_dims, TteError* error) const {
  if (TteStatus s = check_index(input_index, "profile_shape", error)) return s;
  const TensorSpec& spec = plan_.tensors[input_index];
  if (!spec.is_input) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "profile_shape: " + describe(spec, input_index) +
                         " is an output; profiles describe inputs");
  }
  if (profile < 0 || profile >= plan_.num_profiles) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "profile_shape: profile " + std::to_string(profile) +
                         " is out of range; the engine has " + std::to_string(plan_.num_profiles));
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
                     "select_profile: profile " + std::to_string(profile) +
                         " is out of range; the engine has " + std::to_string(plan_.num_profiles));
  }
  profile_ = profile;
  std::fill(shape_set_.begin(), shape_set_.end(), 0);
  std::fill(result_count_.begin(), result_count_.end(), -1);
  counters().select_profiles.fetch_add(1, std::memory_order_relaxed);
  counters().last_profile.store(profile, std::memory_order_relaxed);
  return TTE_OK;
}

TteStatus Engine::set_input_shape(int32_t index, const int64_t* dims, int32_t rank,
                                  TteError* error) {
  if (TteStatus s = check_index(index, "set_input_shape", error)) return s;
  const TensorSpec& spec = plan_.tensors[index];
  if (!spec.is_input) {
    return set_error(
        error, TTE_ERROR_INVALID_ARGUMENT,
        "set_input_shape: " + describe(spec, index) + " is an output; set shapes of inputs");
  }
  if (rank != spec.rank) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "set_input_shape: " + describe(spec, index) + " has rank " +
                         std::to_string(spec.rank) + ", got " + std::to_string(rank) + " dims");
  }
  if (rank > 0 && dims == nullptr) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "set_input_shape: dims is NULL");
  }
  const ProfileDims& p = spec.profiles[profile_];
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] < p.min[d] || dims[d] > p.max[d]) {
      return set_error(
          error, TTE_ERROR_INVALID_ARGUMENT,
          "set_input_shape: " + describe(spec, index) + " shape " + format_dims(dims, rank) +
              " is outside profile " + std::to_string(profile_) + ": dim " + std::to_string(d) +
              " must be in [" + std::to_string(p.min[d]) + ", " + std::to_string(p.max[d]) + "]");
    }
  }
  shapes_[index].assign(dims, dims + rank);
  shape_set_[index] = 1;
  std::fill(result_count_.begin(), result_count_.end(), -1);
  counters().input_shapes_set.fetch_add(1, std::memory_order_relaxed);
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

TteStatus Engine::get_output_shape(int32_t index, int64_t* dims, int32_t capacity,
                                   int32_t* out_rank, TteError* error) const {
  if (TteStatus s = check_index(index, "get_output_shape", error)) return s;
  const TensorSpec& spec = plan_.tensors[index];
  if (spec.is_input) {
    return set_error(
        error, TTE_ERROR_INVALID_ARGUMENT,
        "get_output_shape: " + describe(spec, index) + " is an input; ask for an output");
  }
  std::string unset = unset_inputs();
  if (!unset.empty()) {
    return set_error(
        error, TTE_ERROR_INVALID_STATE,
        "get_output_shape: set every input shape first (after select_profile too); not set: " +
            unset);
  }
  if (out_rank == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "get_output_shape: out_rank is NULL");
  *out_rank = spec.rank;
  if (capacity < spec.rank || (spec.rank > 0 && dims == nullptr)) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "get_output_shape: " + describe(spec, index) + " has rank " +
                         std::to_string(spec.rank) + " but dims holds " +
                         std::to_string(dims == nullptr ? 0 : capacity));
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
                         describe(plan_.tensors[output], output) + " has shape " +
                         format_dims(current_shape(output)) + " and " +
                         describe(plan_.tensors[input], input) + " has shape " +
                         format_dims(current_shape(input)));
  }
  return TTE_OK;
}

TteStatus Engine::check_same_shape(int32_t a, int32_t b, TteError* error) const {
  if (shapes_[a] != shapes_[b]) {
    return set_error(error, TTE_ERROR_RUNTIME,
                     std::string("enqueue: op '") + op_name(plan_.op) + "' needs inputs '" +
                         plan_.tensors[a].name + "' and '" + plan_.tensors[b].name +
                         "' of one shape, got " + format_dims(shapes_[a]) + " and " +
                         format_dims(shapes_[b]));
  }
  return TTE_OK;
}

void Engine::set_own_scratch(std::shared_ptr<void> memory, int64_t bytes) {
  own_scratch_ = std::move(memory);
  scratch_ = own_scratch_.get();
  scratch_size_ = bytes;
}

int64_t Engine::max_scratch() const {
  int64_t bytes = 0;
  for (int64_t b : plan_.scratch_bytes) bytes = std::max(bytes, b);
  return bytes;
}

TteStatus Engine::device_memory_size(int32_t profile, int64_t* out_bytes, TteError* error) const {
  if (out_bytes == nullptr)
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT, "device_memory_size: out_bytes is NULL");
  if (profile < 0 || profile >= plan_.num_profiles) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "device_memory_size: profile " + std::to_string(profile) +
                         " is out of range; the engine has " + std::to_string(plan_.num_profiles));
  }
  *out_bytes = plan_.scratch_bytes.empty() ? 0 : plan_.scratch_bytes[profile];
  return TTE_OK;
}

TteStatus Engine::set_device_memory(void* memory, int64_t bytes, TteError* error) {
  if (!user_managed_) {
    return set_error(error, TTE_ERROR_INVALID_STATE,
                     "set_device_memory: the engine was loaded without user_managed_device_memory "
                     "and has its own");
  }
  if (bytes < 0 || (memory == nullptr && bytes > 0)) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "set_device_memory: " + std::to_string(bytes) + " bytes at " +
                         (memory == nullptr ? "NULL" : "an address"));
  }
  if (reinterpret_cast<uintptr_t>(memory) % 256 != 0) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "set_device_memory: the memory is not 256-byte aligned");
  }
  scratch_ = memory;
  scratch_size_ = bytes;
  device_memory_set_ = true;
  counters().device_memory_sets.fetch_add(1, std::memory_order_relaxed);
  return TTE_OK;
}

TteStatus Engine::prepare_enqueue(TteError* error) {
  if (!plan_.fail_enqueue.empty()) return set_error(error, TTE_ERROR_RUNTIME, plan_.fail_enqueue);
  // TensorRT's rule for kUSER_MANAGED contexts: memory is set before
  // enqueueV3, NULL with 0 bytes when the engine needs none.
  if (user_managed_ && !device_memory_set_) {
    return set_error(error, TTE_ERROR_INVALID_STATE,
                     "enqueue: the engine was loaded with user-managed device memory and "
                     "set_device_memory was never called (call it with NULL and 0 bytes when the "
                     "engine needs no scratch)");
  }
  if (scratch_needed() > 0 && (scratch_ == nullptr || scratch_size_ < scratch_needed())) {
    return set_error(error, TTE_ERROR_INVALID_STATE,
                     "enqueue: profile " + std::to_string(profile_) + " needs " +
                         std::to_string(scratch_needed()) +
                         " bytes of scratch memory; the engine has " +
                         std::to_string(scratch_ ? scratch_size_ : 0) +
                         (user_managed_ ? " (set_device_memory)" : ""));
  }
  if (!unset_inputs().empty()) {
    return set_error(error, TTE_ERROR_INVALID_STATE,
                     "enqueue: set every input shape first (after select_profile too); not set: " +
                         unset_inputs());
  }
  for (size_t i = 0; i < plan_.tensors.size(); ++i)
    numel_[i] = product(current_shape(static_cast<int32_t>(i)));

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
    if (data_dependent(index)) {
      numel_[i] = -1;  // known after the run; its memory comes from output_memory
      continue;
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
      for (size_t k = 0; k < in.size() && s == TTE_OK; ++k)
        s = check_elementwise(out[k], in[k], error);
      break;
    case Op::kKvUpdate:
      if (!(s = check_same_shape(in[0], in[1], error)) && out.size() > 1)
        s = check_elementwise(out[1], in[0], error);
      break;
    case Op::kKeepPositive:
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
  provider->device_memory_size = abi_device_memory_size;
  provider->set_device_memory = abi_set_device_memory;
  provider->set_output_capacity = abi_set_output_capacity;
  provider->get_output_result = abi_get_output_result;
}

TteStatus execute_steps(TteEngine* handle, const TteEngineExecution* call, TteError* error,
                        TteStatus (*enqueue)(TteEngine*, void*, TteError*)) {
  if (TteStatus s = check_engine(handle, error)) return s;
  if (call == nullptr || call->struct_size < offsetof(TteEngineExecution, stream) + sizeof(void*)) {
    return set_error(error, TTE_ERROR_INVALID_ARGUMENT,
                     "execute: the call is NULL or shorter than this provider reads");
  }
  counters().executes.fetch_add(1, std::memory_order_relaxed);
  Engine* engine = from_handle(handle);
  if (call->steps & TTE_EXECUTE_SET_SHAPES) {
    TteStatus s = guarded(error, [&]() -> TteStatus {
      if (call->profile != engine->profile()) {
        if (TteStatus r = engine->select_profile(call->profile, error)) return r;
      }
      const int64_t* dims = call->input_dims;
      for (int32_t i = 0; i < call->num_inputs; ++i) {
        if (TteStatus r =
                engine->set_input_shape(call->input_indices[i], dims, call->input_ranks[i], error))
          return r;
        dims += call->input_ranks[i];
      }
      for (int32_t o = 0; o < call->num_outputs; ++o) {
        if (TteStatus r = engine->get_output_shape(call->output_indices[o],
                                                   call->output_dims + o * TTE_MAX_RANK,
                                                   TTE_MAX_RANK, &call->output_ranks[o], error)) {
          return r;
        }
      }
      return TTE_OK;
    });
    if (s != TTE_OK) return s;
  }
  if (call->steps & TTE_EXECUTE_ENQUEUE) {
    TteStatus s = guarded(error, [&]() -> TteStatus {
      for (int32_t t = 0; t < call->num_tensors; ++t) {
        if (TteStatus r =
                engine->set_tensor_address(call->tensor_indices[t], call->addresses[t], error))
          return r;
      }
      return TTE_OK;
    });
    if (s != TTE_OK) return s;
    return enqueue(handle, call->stream, error);
  }
  return TTE_OK;
}

void record_deserialize(const LoadOptions& options) {
  Counters& c = counters();
  c.last_device_id.store(options.device_id, std::memory_order_relaxed);
  c.last_has_weight_streaming_budget.store(options.has_weight_streaming_budget ? 1 : 0,
                                           std::memory_order_relaxed);
  c.last_weight_streaming_budget.store(options.weight_streaming_budget, std::memory_order_relaxed);
  c.deserializes.fetch_add(1, std::memory_order_relaxed);
}

void record_execution_context() {
  counters().execution_contexts.fetch_add(1, std::memory_order_relaxed);
}
void record_weight_bytes(int64_t delta) {
  counters().live_weight_bytes.fetch_add(delta, std::memory_order_relaxed);
}
void record_own_scratch_bytes(int64_t delta) {
  counters().live_own_scratch_bytes.fetch_add(delta, std::memory_order_relaxed);
}

ProfileInFlight::ProfileInFlight(const Engine& engine)
    : key_(engine.shared.get()), profile_(engine.profile()) {
  Counters& c = counters();
  std::lock_guard<std::mutex> lock(c.in_flight_mutex);
  const uint64_t now = ++c.in_flight[{key_, profile_}];
  if (now > c.max_profile_overlap.load(std::memory_order_relaxed)) {
    c.max_profile_overlap.store(now, std::memory_order_relaxed);
  }
}

ProfileInFlight::~ProfileInFlight() {
  Counters& c = counters();
  std::lock_guard<std::mutex> lock(c.in_flight_mutex);
  auto it = c.in_flight.find({key_, profile_});
  if (it != c.in_flight.end() && --it->second == 0) {
    c.in_flight.erase(it);
  }
}

void record_enqueue(void* stream) {
  counters().last_stream.store(stream, std::memory_order_relaxed);
  counters().enqueues.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tte::test_engine

// The counters of test_provider_api.h, exported the same by every test
// provider library.
extern "C" {

TTE_TEST_PROVIDER_EXPORT void tte_test_provider_stats(TteTestProviderStats* out) {
  if (out == nullptr) return;
  const tte::test_engine::Counters& c = tte::test_engine::counters();
  TteTestProviderStats stats{};
  stats.struct_size = sizeof(TteTestProviderStats);
  stats.last_device_id = c.last_device_id.load(std::memory_order_relaxed);
  stats.deserializes = c.deserializes.load(std::memory_order_relaxed);
  stats.destroys = c.destroys.load(std::memory_order_relaxed);
  stats.enqueues = c.enqueues.load(std::memory_order_relaxed);
  stats.select_profiles = c.select_profiles.load(std::memory_order_relaxed);
  stats.last_stream = c.last_stream.load(std::memory_order_relaxed);
  stats.last_profile = c.last_profile.load(std::memory_order_relaxed);
  stats.last_has_weight_streaming_budget =
      c.last_has_weight_streaming_budget.load(std::memory_order_relaxed);
  stats.last_weight_streaming_budget =
      c.last_weight_streaming_budget.load(std::memory_order_relaxed);
  stats.executes = c.executes.load(std::memory_order_relaxed);
  stats.input_shapes_set = c.input_shapes_set.load(std::memory_order_relaxed);
  stats.execution_contexts = c.execution_contexts.load(std::memory_order_relaxed);
  stats.device_memory_sets = c.device_memory_sets.load(std::memory_order_relaxed);
  stats.live_weight_bytes = c.live_weight_bytes.load(std::memory_order_relaxed);
  stats.live_own_scratch_bytes = c.live_own_scratch_bytes.load(std::memory_order_relaxed);
  stats.max_profile_overlap = c.max_profile_overlap.load(std::memory_order_relaxed);
  size_t n = std::min(static_cast<size_t>(out->struct_size), sizeof(stats));
  if (n < sizeof(stats.struct_size)) return;
  stats.struct_size = static_cast<uint32_t>(n);
  std::memcpy(out, &stats, n);
}

TTE_TEST_PROVIDER_EXPORT void tte_test_provider_reset_stats(void) {
  tte::test_engine::Counters& c = tte::test_engine::counters();
  c.deserializes = 0;
  c.destroys = 0;
  c.enqueues = 0;
  c.select_profiles = 0;
  c.executes = 0;
  c.input_shapes_set = 0;
  c.execution_contexts = 0;
  c.device_memory_sets = 0;
  c.max_profile_overlap = 0;
  // live_*_bytes describe engines that exist: a reset keeps them.
  c.last_device_id = -1;
  c.last_profile = -1;
  c.last_has_weight_streaming_budget = 0;
  c.last_weight_streaming_budget = 0;
  c.last_stream = nullptr;
}

}  // extern "C"
