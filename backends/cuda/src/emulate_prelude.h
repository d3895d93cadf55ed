/* What a CUDA C kernel of quabla-cuda needs from CUDA, on the host (QUABLA_CUDA_EMULATE):
 * one block of one thread, so a grid-stride loop visits every element in order; CUDA's math
 * functions are the C library's of the same names; the intrinsics follow PTX's definitions
 * (cvt.rzi: truncate, saturate, NaN to 0; the bit casts). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
/* One thread per block: shared arrays are the thread's own, and a barrier has no one to wait
   for (a block-per-element fold then folds in sequence, as one thread per element does). */
#define __shared__
static inline void __syncthreads(void) {}

struct quabla_dim3 { unsigned int x, y, z; };
static const quabla_dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
static const quabla_dim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};

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
