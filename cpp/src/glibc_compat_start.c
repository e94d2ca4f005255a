/* Start-up of the executables the wheel ships, for glibc 2.28.

   glibc 2.34 changed the contract between the C runtime start file (crt1.o,
   linked into every executable) and __libc_start_main: the new start file
   passes no init routine, libc runs the executable's constructors itself,
   and the call binds to __libc_start_main@GLIBC_2.34. An older libc has
   neither that version nor that behaviour: it calls the init routine it is
   given, and the dynamic linker leaves the executable's constructors to it.

   The link option --wrap=__libc_start_main (cmake/TteGlibcCompat.cmake)
   sends the start file's call here. We call the first version of
   __libc_start_main with an init routine that runs the constructors the
   way start files before glibc 2.34 did. glibc >= 2.34 still honours an
   init routine (and then leaves the constructors to it), so each runs once
   on either side. DT_PREINIT_ARRAY is run by the dynamic linker on both. */

#include "glibc_compat.h"

typedef int (*tte_main_fn)(int, char**, char**);
typedef void (*tte_init_fn)(int, char**, char**);

/* From the start files (crti.o) and the linker's default script. */
extern void _init(void);
extern tte_init_fn __init_array_start[] __attribute__((visibility("hidden")));
extern tte_init_fn __init_array_end[] __attribute__((visibility("hidden")));

extern int tte_libc_start_main(tte_main_fn main, int argc, char** argv, tte_main_fn init,
                               void (*fini)(void), void (*rtld_fini)(void), void* stack_end);
__asm__(".symver tte_libc_start_main,__libc_start_main@" TTE_GLIBC_BASELINE);

static int tte_run_constructors(int argc, char** argv, char** envp) {
  _init();
  for (tte_init_fn* init = __init_array_start; init != __init_array_end; ++init) {
    (*init)(argc, argv, envp);
  }
  return 0;
}

/* A start file from glibc >= 2.34 passes null init and fini; an older one
   (an old sysroot) passes its own init, which does the same as ours.
   Destructors (DT_FINI_ARRAY) are the dynamic linker's job on every
   version, so fini stays null. */
__attribute__((visibility("hidden"))) int __wrap___libc_start_main(tte_main_fn main, int argc,
                                                                   char** argv, tte_main_fn init,
                                                                   void (*fini)(void),
                                                                   void (*rtld_fini)(void),
                                                                   void* stack_end) {
  (void)fini;
  return tte_libc_start_main(main, argc, argv, init != 0 ? init : tte_run_constructors, 0,
                             rtld_fini, stack_end);
}
