#include "blob/blob_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <set>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

namespace tte {
namespace {

using Json = nlohmann::json;

constexpr char kMagicTR01[4] = {'T', 'R', '0', '1'};
constexpr char kMagicTR02[4] = {'T', 'R', '0', '2'};
constexpr const char* kKindKvCacheUpdate = "kv_cache_update";
constexpr const char* kKindUser = "user";

std::uint32_t read_u32_le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

std::uint64_t read_u64_le(const std::uint8_t* p) {
  return static_cast<std::uint64_t>(read_u32_le(p)) | static_cast<std::uint64_t>(read_u32_le(p + 4))
                                                          << 32;
}

// The four magic bytes as text where they are printable, and always in hex,
// so a wrong blob can be recognised from the message.
std::string describe_magic(const std::uint8_t* p) {
  std::string text = "'";
  char hex[16];
  std::string bytes;
  for (int i = 0; i < 4; ++i) {
    text += (p[i] >= 0x20 && p[i] < 0x7f) ? static_cast<char>(p[i]) : '.';
    std::snprintf(hex, sizeof(hex), "%s%02x", i ? " " : "", p[i]);
    bytes += hex;
  }
  return text + "' (" + bytes + ")";
}

// A string from the document for a one-line message: quoted, control bytes
// escaped, cut short on a character boundary.
std::string shown(const std::string& value) {
  constexpr std::size_t kMaxShown = 80;
  std::size_t cut = std::min(value.size(), kMaxShown);
  while (cut > 0 && cut < value.size() && (static_cast<unsigned char>(value[cut]) & 0xc0) == 0x80)
    --cut;
  std::string out = "'";
  char escaped[8];
  for (std::size_t i = 0; i < cut; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (cut < value.size()) out += "... (" + std::to_string(value.size()) + " bytes)";
  return out;
}

// A first pass over the document, before any of it is built: stops at the
// first syntax error, at nesting deeper or more values than the reader
// allows, and at a repeated key, which JSON readers resolve differently
// (first or last wins). Only then is the document built, by the same lexer.
class MetadataCheck final : public nlohmann::json_sax<Json> {
 public:
  const std::string& error() const { return error_; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    if (!open()) return false;
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& key) override {
    if (!keys_.back().insert(key).second) {
      error_ = "metadata JSON repeats the key " + shown(key) + " in one object";
      return false;
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    error_ = "metadata is not valid JSON (error at metadata byte " + std::to_string(position) +
             "): " + parse_error_text(e);
    return false;
  }

 private:
  // nlohmann's message without its "[json.exception.parse_error.101] "
  // prefix, and ASCII only: it quotes the bytes it stopped at, which may be
  // invalid UTF-8.
  static std::string parse_error_text(const std::exception& e) {
    std::string_view text = e.what();
    if (!text.empty() && text[0] == '[') {
      const std::size_t end = text.find("] ");
      if (end != std::string_view::npos) text.remove_prefix(end + 2);
    }
    std::string out;
    char escaped[8];
    for (const char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c >= 0x7f) {
        std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
        out += escaped;
      } else {
        out += ch;
      }
    }
    return out;
  }

  bool value() {
    if (++values_ > kMaxMetadataJsonValues) {
      error_ =
          "metadata JSON holds more than " + std::to_string(kMaxMetadataJsonValues) + " values";
      return false;
    }
    return true;
  }

  bool open() {
    if (!value()) return false;
    if (++depth_ > kMaxMetadataJsonDepth) {
      error_ =
          "metadata JSON nests deeper than " + std::to_string(kMaxMetadataJsonDepth) + " levels";
      return false;
    }
    return true;
  }

  std::vector<std::set<std::string>> keys_;
  std::size_t values_ = 0;
  int depth_ = 0;
  std::string error_;
};

// Type checks that name the field and what was found.
class FieldReader {
 public:
  explicit FieldReader(std::string* error) : error_(error) {}

  bool fail(const std::string& field, const std::string& what) {
    *error_ = "metadata field " + field + ": " + what;
    return false;
  }

  bool expect(const Json& value, Json::value_t type, const char* expected,
              const std::string& field) {
    const bool matches = value.type() == type ||
                         (type == Json::value_t::number_integer && value.is_number_integer());
    if (matches) return true;
    return fail(field, std::string("expected ") + expected + ", got " + value.type_name());
  }

  bool string(const Json& value, const std::string& field, std::string* out) {
    if (!expect(value, Json::value_t::string, "a string", field)) return false;
    *out = value.get<std::string>();
    return true;
  }

  bool boolean(const Json& value, const std::string& field, bool* out) {
    if (!expect(value, Json::value_t::boolean, "true or false", field)) return false;
    *out = value.get<bool>();
    return true;
  }

  bool int64(const Json& value, const std::string& field, std::int64_t* out) {
    if (!expect(value, Json::value_t::number_integer, "an integer", field)) return false;
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return fail(field, "integer " + value.dump() + " does not fit in int64");
    }
    *out = value.get<std::int64_t>();
    return true;
  }

  // A tensor name: non-empty, and without U+0000, which would cut it short
  // where it crosses the provider ABI as a C string.
  bool name(const Json& value, const std::string& field, std::string* out) {
    if (!string(value, field, out)) return false;
    if (out->empty()) return fail(field, "is empty; every tensor needs a name");
    if (out->find('\0') != std::string::npos) {
      return fail(field, shown(*out) + " contains U+0000, which no TensorRT tensor name can hold");
    }
    return true;
  }

 private:
  std::string* error_;
};

bool read_binding(FieldReader& reader, const Json& entry, const std::string& field,
                  IoBinding* binding) {
  if (!reader.expect(entry, Json::value_t::object, "an object", field)) return false;
  const auto name = entry.find("name");
  if (name == entry.end()) return reader.fail(field, "has no \"name\"");
  if (!reader.name(*name, field + ".name", &binding->name)) return false;
  const auto is_input = entry.find("is_input");
  // No default: a reader that guessed would shift every later argument.
  if (is_input == entry.end()) {
    return reader.fail(field, "(" + shown(binding->name) + ") has no \"is_input\"");
  }
  if (!reader.boolean(*is_input, field + ".is_input", &binding->is_input)) return false;
  const auto dtype = entry.find("dtype");
  if (dtype != entry.end() && !reader.string(*dtype, field + ".dtype", &binding->dtype)) {
    return false;
  }
  const auto shape = entry.find("shape");
  if (shape != entry.end()) {
    if (!reader.expect(*shape, Json::value_t::array, "an array of integers", field + ".shape")) {
      return false;
    }
    binding->shape.reserve(shape->size());
    for (std::size_t d = 0; d < shape->size(); ++d) {
      std::int64_t dim = 0;
      if (!reader.int64((*shape)[d], field + ".shape[" + std::to_string(d) + "]", &dim)) {
        return false;
      }
      binding->shape.push_back(dim);
    }
  }
  return true;
}

bool read_bindings(FieldReader& reader, const Json& list, std::vector<IoBinding>* bindings) {
  if (!reader.expect(list, Json::value_t::array, "an array", "io_bindings")) return false;
  if (list.size() > kMaxBlobBindings) {
    return reader.fail("io_bindings",
                       "has " + std::to_string(list.size()) + " entries, more than the " +
                           std::to_string(kMaxBlobBindings) + " this reader accepts");
  }
  bindings->resize(list.size());
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = "io_bindings[" + std::to_string(i) + "]";
    IoBinding& binding = (*bindings)[i];
    if (!read_binding(reader, list[i], field, &binding)) return false;
    // TensorRT has one name space for inputs and outputs.
    const auto [it, inserted] = seen.emplace(binding.name, i);
    if (!inserted) {
      return reader.fail(field, "repeats the name " + shown(binding.name) + " of io_bindings[" +
                                    std::to_string(it->second) + "]");
    }
    // Inputs and outputs may interleave, as upstream's reader allows: the
    // delegate's arguments are the inputs in their order, then the outputs
    // in theirs (BlobMetadata::input_names, output_names).
  }
  return true;
}

bool read_aliases(FieldReader& reader, const Json& list, const std::vector<IoBinding>& bindings,
                  std::vector<AliasedIo>* aliases) {
  if (!reader.expect(list, Json::value_t::array, "an array", "aliased_io")) return false;
  if (list.size() > kMaxBlobBindings) {
    return reader.fail("aliased_io", "has " + std::to_string(list.size()) +
                                         " entries, more than the " +
                                         std::to_string(kMaxBlobBindings) + " this reader accepts");
  }
  std::unordered_map<std::string, bool> direction;  // name -> is_input
  for (const IoBinding& binding : bindings) direction.emplace(binding.name, binding.is_input);
  std::unordered_map<std::string, std::size_t> outputs_seen;
  std::unordered_map<std::string, std::size_t> inputs_seen;
  aliases->resize(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = "aliased_io[" + std::to_string(i) + "]";
    const Json& entry = list[i];
    AliasedIo& alias = (*aliases)[i];
    if (!reader.expect(entry, Json::value_t::object, "an object", field)) return false;
    const auto output = entry.find("output");
    if (output == entry.end()) return reader.fail(field, "has no \"output\"");
    if (!reader.name(*output, field + ".output", &alias.output)) return false;
    const auto input = entry.find("input");
    if (input == entry.end()) return reader.fail(field, "has no \"input\"");
    if (!reader.name(*input, field + ".input", &alias.input)) return false;
    const auto kind = entry.find("kind");
    if (kind != entry.end()) {
      std::string kind_name;
      if (!reader.string(*kind, field + ".kind", &kind_name)) return false;
      if (kind_name == kKindKvCacheUpdate) {
        alias.kind = AliasKind::kKvCacheUpdate;
      } else if (kind_name == kKindUser) {
        alias.kind = AliasKind::kUser;
      } else {
        return reader.fail(field + ".kind", "unknown alias kind " + shown(kind_name) +
                                                ", expected 'kv_cache_update' or 'user'");
      }
    }
    // One output written in place into two inputs, or two outputs into one
    // input, has no single right binding.
    if (const auto [it, inserted] = outputs_seen.emplace(alias.output, i); !inserted) {
      return reader.fail(field, "aliases output " + shown(alias.output) + " again (aliased_io[" +
                                    std::to_string(it->second) + "] already does)");
    }
    if (const auto [it, inserted] = inputs_seen.emplace(alias.input, i); !inserted) {
      return reader.fail(field, "aliases input " + shown(alias.input) + " again (aliased_io[" +
                                    std::to_string(it->second) + "] already does)");
    }
    // With no io_bindings the names are the engine's, checked when it loads.
    if (bindings.empty()) continue;
    const auto out_it = direction.find(alias.output);
    if (out_it == direction.end() || out_it->second) {
      return reader.fail(
          field + ".output",
          shown(alias.output) + (out_it == direction.end() ? " is not in io_bindings"
                                                           : " is an input, not an output"));
    }
    const auto in_it = direction.find(alias.input);
    if (in_it == direction.end() || !in_it->second) {
      return reader.fail(
          field + ".input",
          shown(alias.input) + (in_it == direction.end() ? " is not in io_bindings"
                                                         : " is an output, not an input"));
    }
  }
  return true;
}

bool read_metadata(const Json& doc, BlobMetadata* metadata, std::string* error) {
  FieldReader reader(error);
  if (!doc.is_object()) {
    *error = std::string("metadata must be a JSON object, got ") + doc.type_name();
    return false;
  }
  const auto bindings = doc.find("io_bindings");
  if (bindings == doc.end()) {
    *error = "metadata has no \"io_bindings\" (write [] to bind by the engine's I/O names)";
    return false;
  }
  if (!read_bindings(reader, *bindings, &metadata->io_bindings)) return false;

  const auto aliases = doc.find("aliased_io");
  if (aliases != doc.end() &&
      !read_aliases(reader, *aliases, metadata->io_bindings, &metadata->aliased_io)) {
    return false;
  }
  // TR02 exists so that readers which ignore aliased_io refuse the blob.
  // This reader reads aliased_io under either magic, as upstream's does: a
  // TR01 blob's aliases are honoured, and a TR02 blob without the key has
  // none. The magic tells old readers what to refuse, not this one.

  if (const auto it = doc.find("hardware_compatible"); it != doc.end()) {
    if (!reader.boolean(*it, "hardware_compatible", &metadata->hardware_compatible)) return false;
  }
  if (const auto it = doc.find("device_id"); it != doc.end()) {
    if (!reader.expect(*it, Json::value_t::number_integer, "an integer", "device_id")) return false;
    const std::int64_t device =
        it->is_number_unsigned()
            ? static_cast<std::int64_t>(std::min<std::uint64_t>(
                  it->get<std::uint64_t>(), std::numeric_limits<std::uint32_t>::max()))
            : it->get<std::int64_t>();
    // -1 is what upstream's writer records for an engine without a device
    // index; it means the device current when the program loads.
    if (device < kCurrentDevice || device > std::numeric_limits<std::int32_t>::max()) {
      return reader.fail("device_id", it->dump() +
                                          " is not a CUDA device index (0 to 2147483647, or -1 "
                                          "for the device current at load)");
    }
    metadata->device_id = static_cast<std::int32_t>(device);
  }
  if (const auto it = doc.find("serialized_metadata"); it != doc.end()) {
    if (!reader.string(*it, "serialized_metadata", &metadata->serialized_metadata)) return false;
  }
  if (const auto it = doc.find("target_platform"); it != doc.end()) {
    if (!reader.string(*it, "target_platform", &metadata->target_platform)) return false;
  }
  return true;
}

ParseResult<BlobHeader> header_failure(const std::string& what) {
  return ParseResult<BlobHeader>::failure("TensorRT delegate blob: " + what);
}

}  // namespace

const char* blob_magic_name(BlobVersion version) {
  return version == BlobVersion::kTR02 ? "TR02" : "TR01";
}

const char* alias_kind_name(AliasKind kind) {
  return kind == AliasKind::kUser ? kKindUser : kKindKvCacheUpdate;
}

std::vector<std::string> BlobMetadata::input_names() const {
  std::vector<std::string> names;
  for (const IoBinding& binding : io_bindings) {
    if (binding.is_input) names.push_back(binding.name);
  }
  return names;
}

std::vector<std::string> BlobMetadata::output_names() const {
  std::vector<std::string> names;
  for (const IoBinding& binding : io_bindings) {
    if (!binding.is_input) names.push_back(binding.name);
  }
  return names;
}

ParseResult<BlobHeader> parse_blob_header(const void* data, std::size_t size) {
  if (data == nullptr) return header_failure("no data (null pointer)");
  if (size < kBlobHeaderSize) {
    return header_failure(std::to_string(size) + " bytes, shorter than the " +
                          std::to_string(kBlobHeaderSize) +
                          "-byte header: the payload is truncated or is not a TensorRT blob");
  }
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  BlobHeader header;
  if (std::memcmp(bytes, kMagicTR01, 4) == 0) {
    header.version = BlobVersion::kTR01;
  } else if (std::memcmp(bytes, kMagicTR02, 4) == 0) {
    header.version = BlobVersion::kTR02;
  } else if (bytes[0] == 'T' && bytes[1] == 'R' && bytes[2] >= '0' && bytes[2] <= '9' &&
             bytes[3] >= '0' && bytes[3] <= '9') {
    return header_failure("format " + describe_magic(bytes) +
                          " is not one this reader knows (TR01, TR02); a newer Torch-TensorRT "
                          "wrote it: upgrade torch-tensorrt-executorch-runtime");
  } else {
    return header_failure("magic at bytes 0..3 is " + describe_magic(bytes) +
                          ", expected 'TR01' or 'TR02': not a TensorRTBackend payload");
  }
  header.metadata_offset = read_u32_le(bytes + 4);
  header.metadata_size = read_u32_le(bytes + 8);
  header.engine_offset = read_u32_le(bytes + 12);
  header.engine_size = read_u64_le(bytes + 16);

  // All arithmetic in 64 bits or as "what is left": a u32 offset plus a u32
  // size cannot wrap a u64, and a u64 engine size is only compared with the
  // room left after its offset.
  const std::uint64_t blob_size = size;
  const std::uint64_t metadata_end =
      static_cast<std::uint64_t>(header.metadata_offset) + header.metadata_size;
  const std::string blob_bytes = " of the " + std::to_string(size) + "-byte blob";
  if (header.metadata_offset < kBlobHeaderSize) {
    return header_failure("metadata_offset (bytes 4..7) is " +
                          std::to_string(header.metadata_offset) + ", inside the " +
                          std::to_string(kBlobHeaderSize) + "-byte header");
  }
  if (header.engine_offset % kEngineAlignment != 0) {
    return header_failure("engine_offset (bytes 12..15) is " +
                          std::to_string(header.engine_offset) + ", not a multiple of " +
                          std::to_string(kEngineAlignment));
  }
  if (metadata_end > blob_size) {
    return header_failure("metadata (offset " + std::to_string(header.metadata_offset) + ", size " +
                          std::to_string(header.metadata_size) + ", bytes 4..11) ends at byte " +
                          std::to_string(metadata_end) + ", past the end" + blob_bytes);
  }
  if (header.engine_offset > blob_size) {
    return header_failure("engine_offset (bytes 12..15) is " +
                          std::to_string(header.engine_offset) + ", past the end" + blob_bytes);
  }
  if (header.engine_size > blob_size - header.engine_offset) {
    return header_failure("engine (offset " + std::to_string(header.engine_offset) + ", size " +
                          std::to_string(header.engine_size) + ", bytes 12..23) runs past the end" +
                          blob_bytes + " (" + std::to_string(blob_size - header.engine_offset) +
                          " bytes left after the offset)");
  }
  if (metadata_end > header.engine_offset) {
    return header_failure("metadata (offset " + std::to_string(header.metadata_offset) + ", size " +
                          std::to_string(header.metadata_size) + ") ends at byte " +
                          std::to_string(metadata_end) + ", past engine_offset " +
                          std::to_string(header.engine_offset) + ": it must end before the engine");
  }
  if (header.engine_size == 0) {
    return header_failure("engine_size (bytes 16..23) is 0: the blob carries no engine");
  }
  return ParseResult<BlobHeader>::success(header);
}

ParseResult<BlobMetadata> parse_blob_metadata(std::string_view json, BlobVersion /*version*/) {
  if (json.size() > kMaxMetadataBytes) {
    return ParseResult<BlobMetadata>::failure(
        "metadata is " + std::to_string(json.size()) + " bytes, more than the " +
        std::to_string(kMaxMetadataBytes) + " this reader accepts");
  }
  try {
    MetadataCheck check;
    if (!Json::sax_parse(json.begin(), json.end(), &check)) {
      return ParseResult<BlobMetadata>::failure(check.error());
    }
    const Json doc = Json::parse(json.begin(), json.end());
    BlobMetadata metadata;
    std::string error;
    if (!read_metadata(doc, &metadata, &error)) {
      return ParseResult<BlobMetadata>::failure(std::move(error));
    }
    return ParseResult<BlobMetadata>::success(std::move(metadata));
  } catch (const std::bad_alloc&) {
    return ParseResult<BlobMetadata>::failure("out of memory reading the metadata JSON");
  } catch (const std::exception& e) {
    return ParseResult<BlobMetadata>::failure(std::string("metadata could not be read: ") +
                                              e.what());
  }
}

ParseResult<DelegateBlob> parse_delegate_blob(const void* data, std::size_t size) {
  ParseResult<BlobHeader> header = parse_blob_header(data, size);
  if (!header) return ParseResult<DelegateBlob>::failure(header.error());
  const BlobHeader& h = header.value();
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  const std::string_view json(reinterpret_cast<const char*>(bytes) + h.metadata_offset,
                              h.metadata_size);
  ParseResult<BlobMetadata> metadata = parse_blob_metadata(json, h.version);
  if (!metadata) {
    return ParseResult<DelegateBlob>::failure(
        "TensorRT delegate blob (" + std::string(blob_magic_name(h.version)) + ", " +
        std::to_string(h.metadata_size) + " bytes of metadata at offset " +
        std::to_string(h.metadata_offset) + "): " + metadata.error());
  }
  DelegateBlob blob;
  blob.header = h;
  blob.metadata = std::move(metadata).value();
  blob.engine = bytes + h.engine_offset;
  blob.engine_size = h.engine_size;
  return ParseResult<DelegateBlob>::success(std::move(blob));
}

std::string describe_delegate_blob(const DelegateBlob& blob) {
  using OrderedJson = nlohmann::ordered_json;
  OrderedJson bindings = OrderedJson::array();
  for (const IoBinding& binding : blob.metadata.io_bindings) {
    bindings.push_back({{"name", binding.name},
                        {"is_input", binding.is_input},
                        {"dtype", binding.dtype},
                        {"shape", binding.shape}});
  }
  OrderedJson aliases = OrderedJson::array();
  for (const AliasedIo& alias : blob.metadata.aliased_io) {
    aliases.push_back(
        {{"output", alias.output}, {"input", alias.input}, {"kind", alias_kind_name(alias.kind)}});
  }
  OrderedJson doc;
  doc["magic"] = blob_magic_name(blob.header.version);
  doc["metadata_offset"] = blob.header.metadata_offset;
  doc["metadata_size"] = blob.header.metadata_size;
  doc["engine_offset"] = blob.header.engine_offset;
  doc["engine_size"] = blob.header.engine_size;
  doc["io_bindings"] = std::move(bindings);
  doc["aliased_io"] = std::move(aliases);
  doc["hardware_compatible"] = blob.metadata.hardware_compatible;
  doc["device_id"] = blob.metadata.device_id;
  doc["serialized_metadata"] = blob.metadata.serialized_metadata;
  doc["target_platform"] = blob.metadata.target_platform;
  // Strings came through the JSON parser, so they are valid UTF-8; replace
  // rather than throw should one built elsewhere not be.
  return doc.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace tte
