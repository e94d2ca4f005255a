// libFuzzer harness for the delegate blob reader: any bytes must be read or
// refused with a message, never crash, hang or read outside the input; what
// is accepted must satisfy the reader's own promises, and its description
// must be JSON that says the same thing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "blob/binding_names.h"
#include "blob/blob_reader.h"
#include "blob/weight_streaming_budget.h"

namespace {

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "blob reader broke a promise: %s\n", what);
    std::abort();
  }
}

void check_accepted(const tte::DelegateBlob& blob, const std::uint8_t* data, std::size_t size) {
  check(blob.engine_size > 0, "engine is not empty");
  check(blob.engine >= data + tte::kBlobHeaderSize && blob.engine <= data + size,
        "engine starts inside the blob");
  check(blob.engine_size <= static_cast<std::uint64_t>(data + size - blob.engine),
        "engine ends inside the blob");
  check(blob.header.engine_offset % tte::kEngineAlignment == 0, "engine is aligned");
  check(static_cast<std::uint64_t>(blob.header.metadata_offset) + blob.header.metadata_size <=
            blob.header.engine_offset,
        "metadata precedes the engine");
  const tte::BlobMetadata& m = blob.metadata;
  check(m.io_bindings.size() <= tte::kMaxBlobBindings, "binding count is bounded");
  check(m.device_id >= 0 || m.device_id == tte::kCurrentDevice,
        "device id is an index or the current device");
  std::unordered_set<std::string> names;
  // Inputs and outputs may interleave (upstream's readers accept that); each
  // kind keeps its own order.
  for (const tte::IoBinding& b : m.io_bindings) {
    check(!b.name.empty() && b.name.find('\0') == std::string::npos,
          "names are non-empty C strings");
    check(names.insert(b.name).second, "names are unique");
  }

  const std::string json = tte::describe_delegate_blob(blob);
  const auto doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  check(!doc.is_discarded(), "description is JSON");
  check(doc.at("engine_size").get<std::uint64_t>() == blob.engine_size,
        "description has the engine size");
  check(doc.at("io_bindings").size() == m.io_bindings.size(), "description has every binding");
  check(doc.at("aliased_io").size() == m.aliased_io.size(), "description has every alias");
  for (std::size_t i = 0; i < m.io_bindings.size(); ++i) {
    check(doc["io_bindings"][i].at("name").get<std::string>() == m.io_bindings[i].name,
          "description keeps names byte for byte");
  }

  if (m.io_bindings.empty()) return;
  std::vector<tte::EngineIoName> engine_io;
  for (const tte::IoBinding& b : m.io_bindings) engine_io.push_back({b.name, b.is_input});
  const auto ordered = tte::order_binding_names(engine_io);
  if (ordered) {
    check(ordered.value().inputs.size() + ordered.value().outputs.size() == engine_io.size(),
          "ordering keeps every name");
  } else {
    check(!ordered.error().empty(), "ordering failure has a message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto blob = tte::parse_delegate_blob(data, size);
  if (blob) {
    check_accepted(blob.value(), data, size);
  } else {
    check(!blob.error().empty(), "refusal has a message");
  }

  // The same bytes as bare metadata, which reaches the JSON checks without a
  // valid header in front.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const tte::BlobVersion version : {tte::BlobVersion::kTR01, tte::BlobVersion::kTR02}) {
    const auto metadata = tte::parse_blob_metadata(text, version);
    check(metadata.ok() || !metadata.error().empty(), "metadata refusal has a message");
  }

  const auto budget = tte::parse_weight_streaming_budget(data, size);
  check(budget.ok() ? budget.value() >= 0 : !budget.error().empty(),
        "budget is non-negative or refused");
  if (const auto index = tte::parse_binding_index(text)) {
    check(text.find_last_of("._") != std::string_view::npos, "an index follows a separator");
  }
  return 0;
}
