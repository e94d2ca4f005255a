// The folder a shared library was loaded from, found by an address inside
// it (dladdr), resolved and with a trailing '/' ("" when unknown). Header
// only: the plugin and the native provider library each ask about
// themselves.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>

#include <string>

namespace tte {

inline std::string library_folder(const void* address_inside) {
  Dl_info info{};
  if (dladdr(address_inside, &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  // Resolved, so that messages name the folder plainly (a process may have
  // loaded the library through bin/../lib/).
  char* resolved = realpath(info.dli_fname, nullptr);
  const std::string path = resolved != nullptr ? resolved : info.dli_fname;
  free(resolved);
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace tte
