/*
 * Runs foreign-architecture programs through qemu-user without binfmt_misc,
 * for the offline build's linux-aarch64 tests (scripts/conda/offline-build.py).
 *
 * Preloaded (LD_PRELOAD) into a native process, it wraps execve, execv,
 * execvp, execvpe, posix_spawn and posix_spawnp: a program whose ELF header
 * names the emulated machine, or a script whose #! interpreter is one, is run
 * as `$TTE_QEMU -L $TTE_QEMU_SYSROOT <program> <args...>`; anything else runs
 * unchanged. Every native program started this way gets this library in its
 * LD_PRELOAD again, whatever environment its parent chose, so the whole
 * process tree below the test runner is covered; emulated programs never
 * see it (it is removed from their environment).
 *
 *   TTE_QEMU          the emulator, e.g. /usr/bin/qemu-aarch64-static
 *   TTE_QEMU_SYSROOT  the guest's sysroot (qemu -L), e.g. /usr/aarch64-linux-gnu
 *   TTE_QEMU_MACHINE  the ELF e_machine to emulate, decimal (183: AArch64)
 *   TTE_QEMU_PRELOAD  this library's path
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char** environ;

typedef int (*execve_fn)(const char*, char* const[], char* const[]);
typedef int (*spawn_fn)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                        const posix_spawnattr_t*, char* const[], char* const[]);

static const char* const kSettings[] = {"TTE_QEMU", "TTE_QEMU_SYSROOT", "TTE_QEMU_MACHINE",
                                        "TTE_QEMU_PRELOAD"};
enum { kNumSettings = 4 };
/* Read when the library loads: a program may clear its environment (env -i)
   before it starts the next one. */
static char loaded[kNumSettings][4096];

__attribute__((constructor)) static void load_settings(void) {
  for (int i = 0; i < kNumSettings; ++i) {
    const char* value = getenv(kSettings[i]);
    if (value != NULL) snprintf(loaded[i], sizeof loaded[i], "%s", value);
  }
}

static const char* setting(char* const envp[], const char* name) {
  size_t n = strlen(name);
  for (char* const* e = envp; e != NULL && *e != NULL; ++e) {
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  for (int i = 0; i < kNumSettings; ++i) {
    if (strcmp(name, kSettings[i]) == 0 && loaded[i][0] != '\0') return loaded[i];
  }
  return NULL;
}

/* 1 when `path` is an ELF file for the emulated machine. */
static int is_guest(const char* path, char* const envp[]) {
  const char* machine = setting(envp, "TTE_QEMU_MACHINE");
  if (machine == NULL) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  Elf64_Ehdr header;
  ssize_t got = read(fd, &header, sizeof header);
  close(fd);
  return got == (ssize_t)sizeof header && memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
         header.e_machine == atoi(machine);
}

/* A copy of envp with LD_PRELOAD set to this library (native) or removed (guest). */
static char** environment(char* const envp[], int guest) {
  const char* self = setting(envp, "TTE_QEMU_PRELOAD");
  size_t count = 0;
  while (envp != NULL && envp[count] != NULL) ++count;
  char** out = calloc(count + 5, sizeof *out);
  size_t k = 0;
  for (size_t i = 0; i < count; ++i) {
    if (strncmp(envp[i], "LD_PRELOAD=", 11) != 0) out[k++] = envp[i];
  }
  if (!guest && self != NULL) {
    static char preload[4096];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", self);
    out[k++] = preload;
  }
  /* Children of a guest program are native again only through us, so the
     settings travel along even when a parent dropped them. */
  static char keep[kNumSettings][4096];
  for (int i = 0; i < kNumSettings; ++i) {
    const char* value = setting(envp, kSettings[i]);
    int present = 0;
    for (size_t j = 0; j < k; ++j) {
      present |= strncmp(out[j], kSettings[i], strlen(kSettings[i])) == 0 &&
                 out[j][strlen(kSettings[i])] == '=';
    }
    if (value != NULL && !present) {
      snprintf(keep[i], sizeof keep[i], "%s=%s", kSettings[i], value);
      out[k++] = keep[i];
    }
  }
  out[k] = NULL;
  return out;
}

/* argv for running `program` (with `argv`) under the emulator. */
static char** emulated_argv(const char* program, const char* argv0, char* const argv[], size_t skip,
                            char* const envp[]) {
  size_t count = 0;
  while (argv != NULL && argv[count] != NULL) ++count;
  char** out = calloc(count + 8, sizeof *out);
  size_t k = 0;
  out[k++] = (char*)setting(envp, "TTE_QEMU");
  out[k++] = "-L";
  out[k++] = (char*)setting(envp, "TTE_QEMU_SYSROOT");
  out[k++] = "-0";
  out[k++] = (char*)argv0;
  out[k++] = (char*)program;
  for (size_t i = skip; i < count; ++i) out[k++] = argv[i];
  out[k] = NULL;
  return out;
}

/* The emulator's argv when `path` is a guest program, or a script whose
   #! interpreter is one (a conda environment's entry points); else NULL. */
static char** emulated(const char* path, char* const argv[], char* const envp[]) {
  if (setting(envp, "TTE_QEMU") == NULL) return NULL;
  const char* argv0 = (argv != NULL && argv[0] != NULL) ? argv[0] : path;
  if (is_guest(path, envp)) return emulated_argv(path, argv0, argv, 1, envp);
  char line[512] = {0};
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  ssize_t got = read(fd, line, sizeof line - 1);
  close(fd);
  if (got < 3 || line[0] != '#' || line[1] != '!') return NULL;
  line[strcspn(line, "\n")] = '\0';
  char* interpreter = line + 2;
  while (*interpreter == ' ') ++interpreter;
  char* option = strchr(interpreter, ' ');
  if (option != NULL) {
    *option++ = '\0';
    while (*option == ' ') ++option;
    if (*option == '\0') option = NULL;
  }
  if (!is_guest(interpreter, envp)) return NULL;
  /* interpreter [option] script args... */
  size_t count = 0;
  while (argv != NULL && argv[count] != NULL) ++count;
  char** script_argv = calloc(count + 3, sizeof *script_argv);
  size_t k = 0;
  script_argv[k++] = strdup(interpreter);
  if (option != NULL) script_argv[k++] = strdup(option);
  script_argv[k++] = (char*)path;
  for (size_t i = 1; i < count; ++i) script_argv[k++] = argv[i];
  script_argv[k] = NULL;
  return emulated_argv(script_argv[0], script_argv[0], script_argv, 1, envp);
}

int execve(const char* path, char* const argv[], char* const envp[]) {
  execve_fn real = (execve_fn)dlsym(RTLD_NEXT, "execve");
  char** args = emulated(path, argv, envp);
  if (args != NULL) return real(args[0], args, environment(envp, 1));
  return real(path, argv, environment(envp, 0));
}

/* glibc's own exec* and posix_spawn* call the kernel directly, so each entry
   point a program may use is wrapped, not only execve. */
int execv(const char* path, char* const argv[]) { return execve(path, argv, environ); }

/* The first executable `file` on PATH (or `file` itself when it has a '/'). */
static const char* resolve(const char* file, char* const envp[]) {
  static char candidate[4096];
  if (strchr(file, '/') != NULL) return file;
  const char* p = setting(envp, "PATH");
  while (p != NULL && *p != '\0') {
    const char* end = strchr(p, ':');
    size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
    snprintf(candidate, sizeof candidate, "%.*s/%s", (int)n, p, file);
    if (access(candidate, X_OK) == 0) return candidate;
    if (end == NULL) break;
    p = end + 1;
  }
  return file;
}

int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return execve(resolve(file, envp), argv, envp);
}

int execvp(const char* file, char* const argv[]) { return execvpe(file, argv, environ); }

static int spawn(spawn_fn real, pid_t* pid, const char* path,
                 const posix_spawn_file_actions_t* actions, const posix_spawnattr_t* attr,
                 char* const argv[], char* const envp[]) {
  char** args = emulated(path, argv, envp);
  if (args != NULL) return real(pid, args[0], actions, attr, args, environment(envp, 1));
  return real(pid, path, actions, attr, argv, environment(envp, 0));
}

int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  return spawn((spawn_fn)dlsym(RTLD_NEXT, "posix_spawn"), pid, path, actions, attr, argv, envp);
}

/* posix_spawnp searches PATH itself; resolve first so the ELF check sees the file. */
int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                 const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  const char* path = resolve(file, envp);
  if (path != file) {
    return spawn((spawn_fn)dlsym(RTLD_NEXT, "posix_spawn"), pid, path, actions, attr, argv, envp);
  }
  return spawn((spawn_fn)dlsym(RTLD_NEXT, "posix_spawnp"), pid, file, actions, attr, argv, envp);
}
