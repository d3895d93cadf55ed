/* What a CUDA C kernel of quabla-cuda needs from CUDA, on the host (QUABLA_CUDA_EMULATE):
 * each launch is one block (a grid-stride loop over blocks visits them all) of several host
 * threads, each with its own `threadIdx` and `blockDim`, `__syncthreads` waiting on the
 * launch's barrier; CUDA's math functions are the C library's of the same names; the
 * intrinsics follow PTX's definitions (cvt.rzi: truncate, saturate, NaN to 0; the bit
 * casts). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
/* A launch is one block at a time (`Emulated` runs its launches one after another), so a
   function's static array is its block's shared memory, seen by all the block's threads. */
#define __shared__ static
static thread_local pthread_barrier_t* quabla_barrier = 0;
static inline void __syncthreads(void) { if (quabla_barrier) pthread_barrier_wait(quabla_barrier); }

struct quabla_dim3 { unsigned int x, y, z; };
static const quabla_dim3 blockIdx = {0, 0, 0}, gridDim = {1, 1, 1};
static thread_local quabla_dim3 threadIdx = {0, 0, 0}, blockDim = {1, 1, 1};

/* One launch of an emulated block: its threads wait at `go` until every one of them exists,
   so the block's size (and its barrier's count) is the number the system could start. */
struct quabla_launch {
  pthread_mutex_t lock;
  pthread_cond_t go;
  int started;
  unsigned int threads;
  pthread_barrier_t barrier;
  void (*run)(void*);
  void* kernel;
};
struct quabla_thread {
  unsigned int index;
  quabla_launch* launch;
};
static void* quabla_thread_main(void* arg) {
  quabla_thread* t = (quabla_thread*)arg;
  quabla_launch* l = t->launch;
  pthread_mutex_lock(&l->lock);
  while (!l->started) pthread_cond_wait(&l->go, &l->lock);
  pthread_mutex_unlock(&l->lock);
  /* Started beyond the power of two the block was cut to: not part of it. */
  if (t->index >= l->threads) return 0;
  threadIdx.x = t->index;
  blockDim.x = l->threads;
  quabla_barrier = &l->barrier;
  l->run(l->kernel);
  return 0;
}
template <typename F> static void quabla_call(void* kernel) { (*(F*)kernel)(); }
/* Runs `kernel` as one block of up to `threads` host threads (pthreads: <thread> would add a
   tenth of a second to every program's compile), cut to a power of two where `power_of_two`
   (a block fold's tree halves the block, as the runtime's launches of those kernels are);
   on the calling thread alone if none can be started. */
template <typename F> static void quabla_block(unsigned int threads, bool power_of_two, F kernel) {
  quabla_launch l;
  pthread_mutex_init(&l.lock, 0);
  pthread_cond_init(&l.go, 0);
  l.started = 0;
  l.run = &quabla_call<F>;
  l.kernel = &kernel;
  quabla_thread* block = (quabla_thread*)calloc(threads, sizeof(quabla_thread));
  pthread_t* ids = (pthread_t*)calloc(threads, sizeof(pthread_t));
  unsigned int made = 0;
  while (block && ids && made < threads) {
    block[made] = quabla_thread{made, &l};
    if (pthread_create(&ids[made], 0, quabla_thread_main, &block[made]) != 0) break;
    ++made;
  }
  l.threads = made ? made : 1;
  while (power_of_two && (l.threads & (l.threads - 1))) l.threads &= l.threads - 1;
  pthread_barrier_init(&l.barrier, 0, l.threads);
  if (made == 0) kernel();
  pthread_mutex_lock(&l.lock);
  l.started = 1;
  pthread_cond_broadcast(&l.go);
  pthread_mutex_unlock(&l.lock);
  for (unsigned int t = 0; t < made; ++t) pthread_join(ids[t], 0);
  pthread_barrier_destroy(&l.barrier);
  pthread_cond_destroy(&l.go);
  pthread_mutex_destroy(&l.lock);
  free(block);
  free(ids);
}

using std::signbit;
using std::isfinite;

/* CUDA's integer min and max. */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }

static inline int __float2int_rz(float x) {
  if (x != x) return 0;
  if (x >= 2147483648.0f) return 2147483647;
  if (x <= -2147483648.0f) return (-2147483647 - 1);
  return (int)x;
}
static inline unsigned int __float2uint_rz(float x) {
  if (x != x || x <= 0.0f) return 0u;
  if (x >= 4294967296.0f) return 4294967295u;
  return (unsigned int)x;
}
/* As measured on an H200: cvt.rzi of an f64 NaN is 0x80000000, for s32 and u32 alike. */
static inline int __double2int_rz(double x) {
  if (x != x) return (-2147483647 - 1);
  if (x >= 2147483647.0) return 2147483647;
  if (x <= -2147483648.0) return (-2147483647 - 1);
  return (int)x;
}
static inline unsigned int __double2uint_rz(double x) {
  if (x != x) return 0x80000000u;
  if (x <= 0.0) return 0u;
  if (x >= 4294967295.0) return 4294967295u;
  return (unsigned int)x;
}
static inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
static inline unsigned int __float_as_uint(float x) { unsigned int r; memcpy(&r, &x, 4); return r; }
static inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned int x) { float r; memcpy(&r, &x, 4); return r; }
static inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }

/* CUDA's erfinv has no C library twin: Winitzki's closed-form estimate (0.2% off; below
   0.01, where it cancels, the series' first term), then Newton steps on erf, or on
   erfc(|y|) = 1 - |x| above 0.5 (exact by Sterbenz), which keeps the tails' relative
   accuracy; four steps reach the double's last bits. */
static inline double erfinv(double x) {
  if (x != x || fabs(x) > 1.0) return NAN;
  if (fabs(x) == 1.0) return copysign(INFINITY, x);
  const double pi = 3.14159265358979323846, a = 0.147;
  double l = log1p(-x * x);
  double t = 2.0 / (pi * a) + l / 2.0;
  double slope = 2.0 / sqrt(pi), ax = fabs(x);
  double y = ax < 0.01 ? x / slope : copysign(sqrt(sqrt(t * t - l / a) - t), x);
  for (int i = 0; i < 4; ++i) {
    double d = slope * exp(-y * y);
    if (ax > 0.5) {
      double ay = fabs(y);
      y = copysign(ay + (erfc(ay) - (1.0 - ax)) / d, x);
    } else {
      y -= (erf(y) - x) / d;
    }
  }
  return y;
}
static inline float erfinvf(float x) { return (float)erfinv((double)x); }
