#include "common/host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace tte {
namespace {

constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();

// The first unsigned number in the file, or kUnknown ("max", missing).
uint64_t read_number(const char* path) {
  std::ifstream file(path);
  unsigned long long value = 0;
  if (!(file >> value)) {
    return kUnknown;
  }
  return static_cast<uint64_t>(value);
}

uint64_t mem_available() {
  std::ifstream file("/proc/meminfo");
  std::string line;
  while (std::getline(file, line)) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) {
      return static_cast<uint64_t>(kib) * 1024;
    }
  }
  return kUnknown;
}

// This process's cgroup folder for `controller` ("" for v2's unified
// hierarchy), as /proc/self/cgroup names it, under /sys/fs/cgroup.
std::string cgroup_dir(const std::string& controller) {
  std::ifstream file("/proc/self/cgroup");
  std::string line;
  while (std::getline(file, line)) {
    // "0::/path" (v2) or "4:memory:/path" (v1)
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) {
      continue;
    }
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controller.empty() ? controllers.empty()
                           : controllers.find(controller) != std::string::npos) {
      return "/sys/fs/cgroup" + std::string(controller.empty() ? "" : "/" + controller) +
             (path == "/" ? "" : path);
    }
  }
  return "";
}

uint64_t headroom(const std::string& dir, const char* limit_file, const char* usage_file) {
  if (dir.empty()) {
    return kUnknown;
  }
  const uint64_t limit = read_number((dir + "/" + limit_file).c_str());
  const uint64_t usage = read_number((dir + "/" + usage_file).c_str());
  // v1 reports "no limit" as a huge page-rounded number.
  if (limit == kUnknown || usage == kUnknown || limit >= (uint64_t{1} << 62)) {
    return kUnknown;
  }
  return limit > usage ? limit - usage : 0;
}

uint64_t cgroup_headroom() {
  const uint64_t v2 = headroom(cgroup_dir(""), "memory.max", "memory.current");
  if (v2 != kUnknown) {
    return v2;
  }
  return headroom(cgroup_dir("memory"), "memory.limit_in_bytes", "memory.usage_in_bytes");
}

}  // namespace

uint64_t available_host_memory() {
  uint64_t available = std::min(mem_available(), cgroup_headroom());
  if (available == kUnknown) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    available = pages > 0 && page_size > 0
                    ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                    : kUnknown;
  }
  return available;
}

std::string byte_count_text(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::ostringstream text;
  text << bytes << " bytes";
  if (bytes >= 1024) {
    double value = static_cast<double>(bytes);
    size_t unit = 0;
    value /= 1024;
    while (value >= 1024 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
      value /= 1024;
      ++unit;
    }
    char scaled[32];
    std::snprintf(scaled, sizeof(scaled), " (%.1f %s)", value, kUnits[unit]);
    text << scaled;
  }
  return text.str();
}

}  // namespace tte
