// How much host memory this process can still take, for bounding what a
// program asks for before anything allocates it.
#pragma once

#include <cstdint>
#include <string>

namespace tte {

// The smallest of: MemAvailable in /proc/meminfo (memory the kernel can give
// without swapping), and, where this process runs in a memory cgroup with a
// limit, that limit less the cgroup's current usage (v2 memory.max and
// memory.current, else v1 memory.limit_in_bytes and memory.usage_in_bytes).
// Falls back to the physical memory size where none of these can be read.
uint64_t available_host_memory();

// total + more, or UINT64_MAX where that does not fit: a sum of sizes a
// damaged file gives, compared with a bound, must not wrap below it.
inline uint64_t saturating_add(uint64_t total, uint64_t more) {
  return more > UINT64_MAX - total ? UINT64_MAX : total + more;
}

// "4294967296 bytes (4.0 GiB)".
std::string byte_count_text(uint64_t bytes);

}  // namespace tte
