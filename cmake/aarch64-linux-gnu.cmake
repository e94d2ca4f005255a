# Cross-compile for linux-aarch64 with Debian's g++-aarch64-linux-gnu.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DCMAKE_FIND_ROOT_PATH="<dirs holding the aarch64 wheels' files>" ...
# Libraries and headers are searched only under the cross sysroot and the
# roots the caller adds (scripts/ci/cross-aarch64.sh builds GoogleTest for
# aarch64 itself); /usr/include is what the cross compiler itself searches. Programs built here run under qemu-user,
# which is also how ctest and gtest_discover_tests start the unit tests.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(TTE_AARCH64_SYSROOT /usr/aarch64-linux-gnu)
list(APPEND CMAKE_FIND_ROOT_PATH "${TTE_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(TTE_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(TTE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${TTE_QEMU_AARCH64};-L;${TTE_AARCH64_SYSROOT}")
endif()
