/* Force-included (-include, cmake/TteGlibcCompat.cmake) into every C and C++
   file of the binaries the wheel ships, so that they load on glibc 2.28
   (manylinux_2_28) although built against a newer glibc. docs/packaging.md
   says why each piece is needed.

   glibc 2.34 moved libdl and libpthread into libc.so.6 and gave the moved
   functions a new default version, GLIBC_2.34. The old versions stay in
   libc.so.6 as aliases of the same code, so a reference pinned to the old
   version works on both sides: glibc >= 2.34 binds it in libc.so.6, older
   glibc in libdl.so.2 / libpthread.so.0, which the same module puts in
   DT_NEEDED. Listed are only functions whose pre-2.34 version is the
   architecture's first one and whose two versions are one function in
   libc.so.6 (not pthread_kill: its GLIBC_2.34 version is a separate one).
   Naming a function the code never calls costs nothing: the assembler emits
   a versioned reference only for symbols the file uses. */
#ifndef TTE_GLIBC_COMPAT_H
#define TTE_GLIBC_COMPAT_H

#if defined(__x86_64__)
#define TTE_GLIBC_BASELINE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define TTE_GLIBC_BASELINE "GLIBC_2.17"
#else
#error "glibc_compat.h supports x86_64 and aarch64 (configure with -DTTE_GLIBC_COMPAT=OFF)"
#endif

#define TTE_GLIBC_PIN(symbol) __asm__(".symver " #symbol "," #symbol "@" TTE_GLIBC_BASELINE)

TTE_GLIBC_PIN(dlopen);
TTE_GLIBC_PIN(dlclose);
TTE_GLIBC_PIN(dlsym);
TTE_GLIBC_PIN(dlvsym);
TTE_GLIBC_PIN(dlerror);
TTE_GLIBC_PIN(dladdr);

TTE_GLIBC_PIN(pthread_once);
TTE_GLIBC_PIN(pthread_key_create);
TTE_GLIBC_PIN(pthread_key_delete);
TTE_GLIBC_PIN(pthread_getspecific);
TTE_GLIBC_PIN(pthread_setspecific);
TTE_GLIBC_PIN(pthread_create);
TTE_GLIBC_PIN(pthread_join);
TTE_GLIBC_PIN(pthread_detach);
TTE_GLIBC_PIN(pthread_mutex_trylock);
TTE_GLIBC_PIN(pthread_mutex_timedlock);
TTE_GLIBC_PIN(pthread_mutexattr_init);
TTE_GLIBC_PIN(pthread_mutexattr_destroy);
TTE_GLIBC_PIN(pthread_mutexattr_settype);
TTE_GLIBC_PIN(pthread_rwlock_init);
TTE_GLIBC_PIN(pthread_rwlock_destroy);
TTE_GLIBC_PIN(pthread_rwlock_rdlock);
TTE_GLIBC_PIN(pthread_rwlock_wrlock);
TTE_GLIBC_PIN(pthread_rwlock_unlock);
TTE_GLIBC_PIN(pthread_rwlock_tryrdlock);
TTE_GLIBC_PIN(pthread_rwlock_trywrlock);
TTE_GLIBC_PIN(pthread_rwlock_timedrdlock);
TTE_GLIBC_PIN(pthread_rwlock_timedwrlock);
TTE_GLIBC_PIN(pthread_attr_setstacksize);

#undef TTE_GLIBC_PIN

/* libstdc++'s headers read glibc's __libc_single_threaded (GLIBC_2.32) to
   skip atomic reference counting. Declared hidden before any header sees
   it, every use binds to our own copy (glibc_compat.c), which says "maybe
   several threads": libstdc++ then always counts atomically, as it must
   when it cannot know. */
#ifdef __cplusplus
extern "C" {
#endif
extern char __libc_single_threaded __attribute__((visibility("hidden")));
#ifdef __cplusplus
}
#endif

#endif /* TTE_GLIBC_COMPAT_H */
