// Where the bytes of a loaded delegate payload came from: which file, as it
// was when opened, and at which offset. The Program API's file loader
// records each backend segment it reads (program/tracked_file_loader.h) for
// as long as the segment's buffer lives; the engine cache asks here before
// hashing a plan, so a program loaded from a file is keyed by the file's
// identity and the plan's offset instead of a digest of every byte
// (backend/engine_loader.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tte {

// Records that [data, data + size) holds the bytes at `file_offset` of the
// file `file_identity` names (WatchedFile::identity_key()). Recorded until
// forget_segment(data).
void record_segment(const void* data, size_t size, std::string file_identity, uint64_t file_offset);
void forget_segment(const void* data);

// "<file identity>@<offset>:<size>" when [data, data + size) lies inside a
// recorded segment: the same text for the same bytes of the same unchanged
// file, whichever buffer holds them. nullopt otherwise.
std::optional<std::string> segment_origin(const void* data, size_t size);

// How many segments are recorded now (tests: none is left behind).
size_t recorded_segment_count();

}  // namespace tte
