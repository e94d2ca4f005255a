// The one reader of the TensorRTBackend delegate blob (DESIGN.md section 3).
//
// A blob is a 32-byte little-endian header (Python struct `<4sIIIQ8s`), the
// metadata JSON, zero padding, and the TensorRT plan at a 16-byte aligned
// offset. Torch-TensorRT's exporter writes it; everything in it is untrusted.
// The parser checks every offset and size against the buffer before reading,
// decodes the JSON with a real parser, and says what was wrong and where.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/parse_result.h"

namespace tte {

inline constexpr std::size_t kBlobHeaderSize = 32;
inline constexpr std::uint32_t kEngineAlignment = 16;
// Bounds on what a blob may make the reader build, far above any real
// engine (upstream writes a few hundred bytes per binding, nesting 4 deep).
inline constexpr std::size_t kMaxMetadataBytes = 64u << 20;
inline constexpr int kMaxMetadataJsonDepth = 64;
inline constexpr std::size_t kMaxMetadataJsonValues = 1u << 21;
inline constexpr std::size_t kMaxBlobBindings = 65536;

enum class BlobVersion {
  kTR01,  // no aliased I/O
  kTR02,  // aliased I/O; readers that only know TR01 refuse it
};

// "TR01" or "TR02".
const char* blob_magic_name(BlobVersion version);

// The fixed header, as read (offsets relative to the blob's first byte).
struct BlobHeader {
  BlobVersion version = BlobVersion::kTR01;
  std::uint32_t metadata_offset = 0;
  std::uint32_t metadata_size = 0;
  std::uint32_t engine_offset = 0;
  std::uint64_t engine_size = 0;
};

struct IoBinding {
  std::string name;  // UTF-8, non-empty, no U+0000
  bool is_input = false;
  // Written by upstream as "" and [] and not used by the backend, which takes
  // dtypes and shapes from the engine.
  std::string dtype;
  std::vector<std::int64_t> shape;
};

enum class AliasKind {
  kKvCacheUpdate,  // TensorRT KV-cache update layer (the default)
  kUser,           // declared by the exporter's user
};

// "kv_cache_update" or "user".
const char* alias_kind_name(AliasKind kind);

// An output the engine writes into one of its inputs in place.
struct AliasedIo {
  std::string output;
  std::string input;
  AliasKind kind = AliasKind::kKvCacheUpdate;
};

// BlobMetadata::device_id of an engine for whichever CUDA device is current
// on the thread that loads the program (upstream writes it for an engine
// whose device had no index).
inline constexpr std::int32_t kCurrentDevice = -1;

struct BlobMetadata {
  // The delegate's inputs in argument order and its outputs in engine order;
  // upstream writes the inputs first, and readers accept them interleaved
  // (input_names() and output_names() keep each kind's order).
  // Empty: bind by the engine's own I/O names (see binding_names.h).
  std::vector<IoBinding> io_bindings;
  std::vector<AliasedIo> aliased_io;
  bool hardware_compatible = false;
  std::int32_t device_id = 0;  // >= 0, or kCurrentDevice
  std::string serialized_metadata;
  std::string target_platform;

  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
};

// A parsed blob. `engine` points into the buffer that was parsed and is only
// valid while that buffer lives; everything else is owned.
struct DelegateBlob {
  BlobHeader header;
  BlobMetadata metadata;
  const std::uint8_t* engine = nullptr;
  std::uint64_t engine_size = 0;
};

// Reads and checks the header alone: size, magic, and that the metadata and
// the engine lie inside the blob, in that order, without overlapping.
ParseResult<BlobHeader> parse_blob_header(const void* data, std::size_t size);

// Parses the metadata JSON of a blob with the given magic (TR01 and TR02
// metadata are read alike).
ParseResult<BlobMetadata> parse_blob_metadata(std::string_view json, BlobVersion version);

// Header, then metadata. Never reads outside [data, data + size).
ParseResult<DelegateBlob> parse_delegate_blob(const void* data, std::size_t size);

// The JSON document tte_blob_describe_json returns for a parsed blob:
// {"magic","metadata_offset","metadata_size","engine_offset","engine_size",
//  "io_bindings":[{"name","is_input","dtype","shape"}],
//  "aliased_io":[{"output","input","kind"}],"hardware_compatible",
//  "device_id","serialized_metadata","target_platform"}.
std::string describe_delegate_blob(const DelegateBlob& blob);

}  // namespace tte
