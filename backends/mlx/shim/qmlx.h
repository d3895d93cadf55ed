/* The C ABI of quabla-mlx's shim over MLX's C++ API (see qmlx.cpp). Every function that can
 * fail returns 0 on success and 1 on failure, with the message in qmlx_last_error(); no C++
 * exception crosses it. Arrays are owned handles, released with qmlx_free. The codes below
 * are mirrored in src/shim.rs. */
#ifndef QMLX_H
#define QMLX_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qmlx_array qmlx_array;

enum qmlx_dtype { QMLX_BOOL = 0, QMLX_I32 = 1, QMLX_U32 = 2, QMLX_F32 = 3, QMLX_F64 = 4 };

enum qmlx_unary {
  QMLX_NEG, QMLX_ABS, QMLX_SIGN, QMLX_FLOOR, QMLX_CEIL, QMLX_ROUND_EVEN, QMLX_EXPM1,
  QMLX_LOG, QMLX_LOG1P, QMLX_SQRT, QMLX_RSQRT, QMLX_TAN, QMLX_ASIN, QMLX_ACOS, QMLX_ATAN,
  QMLX_SINH, QMLX_COSH, QMLX_TANH, QMLX_ASINH, QMLX_ACOSH, QMLX_ATANH, QMLX_ISFINITE,
  QMLX_ISNAN, QMLX_LOGICAL_NOT, QMLX_BITWISE_NOT, QMLX_UNARY_COUNT
};

enum qmlx_binary {
  QMLX_ADD, QMLX_SUB, QMLX_MUL, QMLX_DIVIDE, QMLX_FLOOR_DIVIDE, QMLX_REMAINDER, QMLX_POWER,
  QMLX_MAXIMUM, QMLX_MINIMUM, QMLX_ATAN2, QMLX_LOGICAL_AND, QMLX_LOGICAL_OR, QMLX_BITWISE_AND,
  QMLX_BITWISE_OR, QMLX_BITWISE_XOR, QMLX_SHIFT_LEFT, QMLX_SHIFT_RIGHT, QMLX_EQ, QMLX_NE,
  QMLX_LT, QMLX_LE, QMLX_GT, QMLX_GE, QMLX_BINARY_COUNT
};

/* Functions computed with the C library by the shim's own primitive (MLX's are float32
 * approximations). */
enum qmlx_libm {
  QMLX_LIBM_EXP, QMLX_LIBM_EXP2, QMLX_LIBM_SIN, QMLX_LIBM_COS, QMLX_LIBM_ERF, QMLX_LIBM_ERFC,
  QMLX_LIBM_CBRT, QMLX_LIBM_LOGISTIC, QMLX_LIBM_ERF_INV, QMLX_LIBM_COUNT
};

enum qmlx_reduce { QMLX_SUM, QMLX_PROD, QMLX_MAX, QMLX_MIN, QMLX_ALL, QMLX_ANY, QMLX_REDUCE_COUNT };

const char* qmlx_last_error(void);
const char* qmlx_version(void);
/* The number of codes in each enum above (0 unary, 1 binary, 2 libm, 3 reduce), so the Rust
 * side can test that its mirrors agree. */
int qmlx_enum_count(int which);

int qmlx_from_bytes(int dtype, const int32_t* shape, size_t ndim, const void* data,
                    qmlx_array** out);
int qmlx_to_bytes(const qmlx_array* a, void* dst, size_t nbytes);
int qmlx_eval(qmlx_array* const* arrays, size_t n);
/* Schedules the computation of the arrays and returns at once. */
int qmlx_async_eval(qmlx_array* const* arrays, size_t n);
/* Whether the array's value is computed (never blocks). */
int qmlx_is_available(const qmlx_array* a);
/* Whether this MLX build has a usable GPU (Metal; CUDA builds), and the choice of it for
 * the ops that are not the shim's own primitives or linear algebra (those stay on the CPU,
 * whose memory a GPU of MLX's shares or reaches). */
int qmlx_gpu_available(void);
void qmlx_select_gpu(int gpu);
void qmlx_free(qmlx_array* a);

int qmlx_unary(int op, const qmlx_array* a, qmlx_array** out);
int qmlx_libm(int fn, const qmlx_array* a, qmlx_array** out);
int qmlx_binary(int op, const qmlx_array* a, const qmlx_array* b, qmlx_array** out);
int qmlx_where(const qmlx_array* c, const qmlx_array* a, const qmlx_array* b, qmlx_array** out);
int qmlx_astype(const qmlx_array* a, int dtype, qmlx_array** out);
int qmlx_view(const qmlx_array* a, int dtype, qmlx_array** out);
int qmlx_arange(int32_t n, int dtype, qmlx_array** out);

int qmlx_broadcast_to(const qmlx_array* a, const int32_t* shape, size_t ndim, qmlx_array** out);
int qmlx_reshape(const qmlx_array* a, const int32_t* shape, size_t ndim, qmlx_array** out);
int qmlx_transpose(const qmlx_array* a, const int32_t* perm, size_t ndim, qmlx_array** out);
int qmlx_slice(const qmlx_array* a, const int32_t* start, const int32_t* stop,
               const int32_t* strides, size_t ndim, qmlx_array** out);
int qmlx_pad(const qmlx_array* a, const int32_t* low, const int32_t* high, size_t ndim,
             const qmlx_array* value, qmlx_array** out);
int qmlx_concatenate(const qmlx_array* const* arrays, size_t n, int32_t axis, qmlx_array** out);
int qmlx_flip(const qmlx_array* a, int32_t axis, qmlx_array** out);

int qmlx_reduce(int kind, const qmlx_array* a, const int32_t* axes, size_t naxes,
                qmlx_array** out);
int qmlx_cumulative(int kind, const qmlx_array* a, int32_t axis, int reverse, qmlx_array** out);
int qmlx_matmul(const qmlx_array* a, const qmlx_array* b, qmlx_array** out);

int qmlx_gather(const qmlx_array* a, const qmlx_array* const* indices, size_t n,
                const int32_t* axes, const int32_t* slice_sizes, size_t ndim, qmlx_array** out);
int qmlx_scatter_add(const qmlx_array* a, const qmlx_array* const* indices, size_t n,
                     const qmlx_array* updates, const int32_t* axes, qmlx_array** out);
int qmlx_dynamic_slice(const qmlx_array* a, const qmlx_array* start, const int32_t* axes,
                       size_t naxes, const int32_t* sizes, size_t ndim, qmlx_array** out);
int qmlx_dynamic_update_slice(const qmlx_array* a, const qmlx_array* update,
                              const qmlx_array* start, const int32_t* axes, size_t naxes,
                              qmlx_array** out);
int qmlx_sort_permutation(const qmlx_array* const* keys, size_t n, int32_t axis, int descending,
                          qmlx_array** out);
int qmlx_take_along_axis(const qmlx_array* a, const qmlx_array* indices, int32_t axis,
                         qmlx_array** out);

/* Dense linear algebra on the last two axes (batched), MLX's CPU stream (LAPACK). */
int qmlx_cholesky(const qmlx_array* a, qmlx_array** out);
int qmlx_lu(const qmlx_array* a, qmlx_array** lu, qmlx_array** pivots,
            qmlx_array** permutation);
int qmlx_qr(const qmlx_array* a, qmlx_array** q, qmlx_array** r);
int qmlx_svd(const qmlx_array* a, int compute_uv, qmlx_array** u, qmlx_array** s,
             qmlx_array** vt);
int qmlx_eigh(const qmlx_array* a, qmlx_array** w, qmlx_array** v);
int qmlx_solve_triangular(const qmlx_array* a, const qmlx_array* b, int upper,
                          qmlx_array** out);

/* mx::compile of a function whose graph the caller builds. `trace` is called with borrowed
 * input handles when MLX traces (the first call per input shapes and dtypes); it writes
 * `nout` owned output handles and returns 0, or sets the message (qmlx_set_error) and
 * returns 1. `payload` must outlive the compiled function. */
typedef struct qmlx_compiled qmlx_compiled;
typedef int (*qmlx_trace_fn)(void* payload, qmlx_array* const* inputs, size_t n,
                             qmlx_array** outputs, size_t nout);
int qmlx_compile(qmlx_trace_fn trace, void* payload, size_t nout, qmlx_compiled** out);
/* Calls a compiled function: `nout` owned, lazy results (all or none). */
int qmlx_compiled_call(const qmlx_compiled* f, qmlx_array* const* inputs, size_t n,
                       qmlx_array** outputs, size_t nout);
void qmlx_compiled_free(qmlx_compiled* f);
/* Sets the message qmlx_last_error() returns (for a trace callback that fails). */
void qmlx_set_error(const char* message);

#ifdef __cplusplus
}
#endif
#endif
