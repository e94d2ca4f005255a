/* Our own __libc_single_threaded (see glibc_compat.h): 0 means "the process
   may have several threads", the answer that is always safe. Hidden, so it
   binds inside each binary and no GLIBC_2.32 reference remains. */
#include "glibc_compat.h"

__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
