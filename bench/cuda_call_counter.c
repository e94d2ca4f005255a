/* Counts the CUDA runtime calls of a process and the time spent in each, for
 * bench/cuda_call_counts.py (a diagnostic, not a benchmark: the counting adds
 * about 30 ns to every call it wraps). Preloaded (LD_PRELOAD), it stands in
 * front of libcudart for the functions below and forwards each call to the
 * next definition (dlsym RTLD_NEXT); the script reads the counters through
 * cuda_calls_reset() and cuda_calls_dump(). Not thread-safe: one thread
 * counts at a time. Built by scripts/gpu-bundle.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef int cudaError_t;

#define MAX_FUNCTIONS 64
static const char* g_names[MAX_FUNCTIONS];
static uint64_t g_counts[MAX_FUNCTIONS];
static uint64_t g_nanoseconds[MAX_FUNCTIONS];
static int g_num_functions;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int slot_of(const char* name) {
  for (int i = 0; i < g_num_functions; ++i) {
    if (g_names[i] == name) return i;
  }
  if (g_num_functions == MAX_FUNCTIONS) return MAX_FUNCTIONS - 1;
  g_names[g_num_functions] = name;
  return g_num_functions++;
}

void cuda_calls_reset(void) {
  memset(g_counts, 0, sizeof(g_counts));
  memset(g_nanoseconds, 0, sizeof(g_nanoseconds));
}

/* One line per function called since the reset: "name count nanoseconds". */
int cuda_calls_dump(char* buffer, int capacity) {
  int used = 0;
  buffer[0] = '\0';
  for (int i = 0; i < g_num_functions && used < capacity; ++i) {
    if (g_counts[i] == 0) continue;
    used += snprintf(buffer + used, (size_t)(capacity - used), "%s %llu %llu\n", g_names[i],
                     (unsigned long long)g_counts[i], (unsigned long long)g_nanoseconds[i]);
  }
  return used;
}

#define COUNTED(name, params, args)                          \
  cudaError_t name params {                                  \
    static cudaError_t(*real) params;                        \
    static int slot = -1;                                    \
    if (real == NULL) {                                      \
      real = (cudaError_t(*) params)dlsym(RTLD_NEXT, #name); \
      slot = slot_of(#name);                                 \
    }                                                        \
    const uint64_t start = now_ns();                         \
    const cudaError_t result = real args;                    \
    g_nanoseconds[slot] += now_ns() - start;                 \
    ++g_counts[slot];                                        \
    return result;                                           \
  }

COUNTED(cudaPointerGetAttributes, (void* a, const void* p), (a, p))
COUNTED(cudaGetDevice, (int* d), (d))
COUNTED(cudaSetDevice, (int d), (d))
COUNTED(cudaStreamSynchronize, (void* s), (s))
COUNTED(cudaEventRecord, (void* e, void* s), (e, s))
COUNTED(cudaEventSynchronize, (void* e), (e))
COUNTED(cudaStreamWaitEvent, (void* s, void* e, unsigned f), (s, e, f))
COUNTED(cudaMemcpyAsync, (void* d, const void* s, size_t n, int k, void* st), (d, s, n, k, st))
COUNTED(cudaMemcpy, (void* d, const void* s, size_t n, int k), (d, s, n, k))
COUNTED(cudaMemsetAsync, (void* d, int v, size_t n, void* st), (d, v, n, st))
COUNTED(cudaMemset, (void* d, int v, size_t n), (d, v, n))
COUNTED(cudaGraphLaunch, (void* g, void* s), (g, s))
COUNTED(cudaStreamBeginCapture, (void* s, int m), (s, m))
COUNTED(cudaStreamEndCapture, (void* s, void** g), (s, g))
COUNTED(cudaGraphExecUpdate, (void* e, void* g, void* i), (e, g, i))
COUNTED(cudaGraphInstantiate, (void** e, void* g, unsigned long long f), (e, g, f))
COUNTED(cudaGraphDestroy, (void* g), (g))
COUNTED(cudaGetLastError, (void), ())
COUNTED(cudaMalloc, (void** p, size_t n), (p, n))
COUNTED(cudaFree, (void* p), (p))
COUNTED(cudaHostAlloc, (void** p, size_t n, unsigned f), (p, n, f))
COUNTED(cudaFreeHost, (void* p), (p))
COUNTED(cudaStreamCreateWithFlags, (void** s, unsigned f), (s, f))
COUNTED(cudaEventCreateWithFlags, (void** e, unsigned f), (e, f))
COUNTED(cudaMallocFromPoolAsync, (void** p, size_t n, void* pool, void* s), (p, n, pool, s))
COUNTED(cudaFreeAsync, (void* p, void* s), (p, s))
COUNTED(cudaDeviceGetAttribute, (int* v, int a, int d), (v, a, d))
COUNTED(cudaGetDeviceCount, (int* c), (c))
COUNTED(cudaFuncGetAttributes, (void* a, const void* f), (a, f))
COUNTED(cudaMemGetInfo, (size_t* a, size_t* b), (a, b))
