// quabla-mlx's shim: a C ABI over MLX's C++ API. Every entry point runs inside try/catch and
// reports failure as a status code and a message (qmlx_last_error), because a C++ exception
// unwinding into Rust is undefined behaviour. The functions are thin: QIR's exact semantics
// (integer division by zero, saturating conversions, clamped starts) are composed on the Rust
// side from these, so this file stays a list of MLX calls.
#include "qmlx.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlx/backend/cpu/encoder.h"
#include "mlx/mlx.h"
#include "mlx/primitives.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

namespace mx = mlx::core;

struct qmlx_array {
  mx::array a;
};

namespace {

thread_local std::string last_error;

// MLX's CPU stream: the shim's own primitives and MLX's linalg run there whatever the device.
mx::StreamOrDevice cpu() { return mx::Device(mx::Device::cpu); }

// Where the other ops run: the CPU unless the plugin selected the GPU (qmlx_select_gpu).
std::atomic<bool> on_gpu{false};

mx::StreamOrDevice compute() {
  return on_gpu.load() ? mx::Device(mx::Device::gpu) : mx::Device(mx::Device::cpu);
}

mx::Dtype dtype_of(int code) {
  switch (code) {
    case QMLX_BOOL: return mx::bool_;
    case QMLX_I32: return mx::int32;
    case QMLX_U32: return mx::uint32;
    case QMLX_F32: return mx::float32;
    case QMLX_F64: return mx::float64;
  }
  throw std::invalid_argument("unknown dtype code " + std::to_string(code));
}

mx::Shape shape_of(const int32_t* p, size_t n) { return mx::Shape(p, p + n); }

std::vector<int> ints(const int32_t* p, size_t n) { return std::vector<int>(p, p + n); }

template <typename F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "an unknown C++ exception in MLX";
  }
  return 1;
}

int give(mx::array a, qmlx_array** out) {
  *out = new qmlx_array{std::move(a)};
  return 0;
}

// MLX's CPU kernels compute exp, sin, cos, erf and the sigmoid with float32 polynomials, in
// float64 too (measured: exp(1.0) in float64 has 24 correct bits), and flush results below
// float32's normal range. This primitive computes those functions with the C library (within
// an ulp in double; float32 rounds the double result), elementwise over a row-contiguous
// input.
class Libm : public mx::UnaryPrimitive {
 public:
  Libm(mx::Stream stream, int fn) : mx::UnaryPrimitive(stream), fn_(fn) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    const auto& x = inputs[0];
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    encoder.set_input_array(x);
    encoder.set_output_array(out);
    size_t n = out.size();
    int fn = fn_;
    if (out.dtype() == mx::float64) {
      encoder.dispatch([src = x.data<double>(), dst = out.data<double>(), n, fn]() {
        for (size_t i = 0; i < n; ++i) dst[i] = apply(fn, src[i]);
      });
    } else {
      encoder.dispatch([src = x.data<float>(), dst = out.data<float>(), n, fn]() {
        for (size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(apply(fn, src[i]));
      });
    }
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("quabla-mlx's Libm primitive runs on the CPU stream only");
  }

  const char* name() const override { return "QuablaLibm"; }

  bool is_equivalent(const mx::Primitive& other) const override {
    auto o = dynamic_cast<const Libm*>(&other);
    return o != nullptr && o->fn_ == fn_;
  }

  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }

 private:
  int fn_;

  static double apply(int fn, double v) {
    switch (fn) {
      case QMLX_LIBM_EXP: return std::exp(v);
      case QMLX_LIBM_EXP2: return std::exp2(v);
      case QMLX_LIBM_SIN: return std::sin(v);
      case QMLX_LIBM_COS: return std::cos(v);
      case QMLX_LIBM_ERF: return std::erf(v);
      case QMLX_LIBM_ERFC: return std::erfc(v);
      case QMLX_LIBM_CBRT: return std::cbrt(v);
      // Each form takes e^t of t <= 0, within an ulp and never overflowing, so results
      // down to the subnormals keep their digits; the sum and quotient round once each.
      case QMLX_LIBM_LOGISTIC: {
        if (v >= 0) return 1.0 / (1.0 + std::exp(-v));
        double e = std::exp(v);
        return e / (1.0 + e);
      }
      case QMLX_LIBM_ERF_INV: return erf_inv(v);
    }
    return std::nan("");
  }

  // Giles' double-precision polynomials in w = -log1p(-v^2) (XLA's ErfInv64; the C library
  // has no inverse error function): within 4e-13 relative near +-1, closer elsewhere, so a
  // float32 result rounded from it is within an ulp.
  static double erf_inv(double v) {
    static const double central[23] = {-0x1.135d2e746e627p-68, -0x1.8ddf93324d327p-63, 0x1.7b83eef0b7c9fp-60, 0x1.9ba72cd589b91p-57, -0x1.33689090a6b96p-53, 0x1.82e11898132e0p-56, 0x1.de4acfd9e26bap-48, -0x1.6d33eed66c487p-45, -0x1.6f2167040d8e2p-44, 0x1.72a22c2d77e20p-39, -0x1.c8859c4e5c0afp-37, -0x1.dc583d118a561p-35, 0x1.20f47ccf46b3cp-30, -0x1.1a9e38dc84d60p-28, -0x1.f36cd6d3d46a9p-26, 0x1.c6b4f5d03b787p-22, -0x1.6e8a5434ae8a2p-20, -0x1.d1d1f7b8736f6p-17, 0x1.879c2a212f024p-13, -0x1.845769484fca8p-11, -0x1.8b6c33114f909p-8, 0x1.ebd80d9b13e28p-3, 0x1.a755e7c99ae86p+0};
    static const double middle[19] = {0x1.3040f87dbd932p-29, 0x1.85cbe52878635p-24, -0x1.2777453dd3955p-22, 0x1.395abcd554c6cp-26, 0x1.936388a3790adp-20, -0x1.0d5db812b5083p-18, 0x1.8860cd5d652f6p-19, 0x1.a29a0cacdfb23p-17, -0x1.8cef1f80281f2p-15, 0x1.1e684d0b9188ap-14, 0x1.932cd54c8a222p-16, -0x1.7448a89ef8aa3p-12, 0x1.f3cc55ad40c25p-11, -0x1.ba924132f38b1p-10, 0x1.468eeca533cf8p-9, -0x1.ebadabb891bbdp-9, 0x1.5ffcfe5b76afcp-8, 0x1.0158a6d641d39p+0, 0x1.8abcc380d5a48p+1};
    static const double tail[17] = {-0x1.dcec3a7785389p-36, -0x1.18feec0e38727p-32, 0x1.9e6bf2dda45e3p-30, -0x1.0468fb24e2f5fp-28, 0x1.05ac6a8fba182p-27, -0x1.0102e495fb9c0p-26, 0x1.f4c20e1334af8p-26, -0x1.22d220fdf9c3ep-24, 0x1.ebc8bb824cb54p-23, -0x1.0a8d40ea372ccp-20, 0x1.2fbd29d093d2bp-18, -0x1.4a3497e1e0facp-16, 0x1.3ebf4eb00938fp-14, -0x1.c2f36a8fc5d53p-13, -0x1.22ea5df04047cp-13, 0x1.02a30d1fba0dcp+0, 0x1.3664ddd1ad7fbp+2};
    if (std::isnan(v) || std::fabs(v) > 1.0) return std::nan("");
    if (std::fabs(v) == 1.0) return std::copysign(INFINITY, v);
    double w = -std::log1p(-v * v);
    const double* c = tail;
    int n = 17;
    double t = std::sqrt(w) - 5.0;
    if (w < 6.25) {
      c = central;
      n = 23;
      t = w - 3.125;
    } else if (w < 16.0) {
      c = middle;
      n = 19;
      t = std::sqrt(w) - 3.25;
    }
    double p = c[0];
    for (int i = 1; i < n; ++i) p = c[i] + p * t;
    return p * v;
  }
};

// The permutation that stably sorts each line along `axis_` by the keys, lexicographically,
// in numpy's order (-0 ties +0, NaN after +inf, NaNs tied); `descending_` reverses the order
// of unequal keys and keeps equal ones in place, as QIR's `sort`. MLX's own sort is not
// documented as stable, and its NaN order is not numpy's.
class SortPermutation : public mx::UnaryPrimitive {
 public:
  SortPermutation(mx::Stream stream, int axis, bool descending)
      : mx::UnaryPrimitive(stream), axis_(axis), descending_(descending) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    std::vector<Key> keys;
    for (const auto& k : inputs) {
      encoder.set_input_array(k);
      keys.push_back(Key{k.dtype(), k.data<void>()});
    }
    encoder.set_output_array(out);
    const auto& shape = out.shape();
    size_t n = shape[axis_], inner = 1, outer = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (static_cast<int>(d) < axis_) outer *= shape[d];
      if (static_cast<int>(d) > axis_) inner *= shape[d];
    }
    encoder.dispatch([keys, dst = out.data<int32_t>(), n, inner, outer, desc = descending_]() {
      std::vector<int32_t> perm(n);
      for (size_t o = 0; o < outer; ++o) {
        for (size_t i = 0; i < inner; ++i) {
          size_t base = o * n * inner + i;
          for (size_t j = 0; j < n; ++j) perm[j] = static_cast<int32_t>(j);
          auto position = [&](int32_t j) { return base + static_cast<size_t>(j) * inner; };
          std::stable_sort(perm.begin(), perm.end(), [&](int32_t a, int32_t b) {
            for (const auto& k : keys) {
              int c = k.compare(position(a), position(b));
              if (c != 0) return desc ? c > 0 : c < 0;
            }
            return false;
          });
          for (size_t j = 0; j < n; ++j) dst[position(static_cast<int32_t>(j))] = perm[j];
        }
      }
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("quabla-mlx's sort runs on the CPU stream only");
  }

  const char* name() const override { return "QuablaSortPermutation"; }

  std::vector<mx::Shape> output_shapes(const std::vector<mx::array>& inputs) override {
    return {inputs[0].shape()};
  }

 private:
  struct Key {
    mx::Dtype dtype;
    const void* data;

    template <typename T>
    static int total(T a, T b) {
      if constexpr (std::is_floating_point_v<T>) {
        bool na = std::isnan(a), nb = std::isnan(b);
        if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
      }
      return a < b ? -1 : (b < a ? 1 : 0);
    }

    int compare(size_t i, size_t j) const {
      switch (dtype) {
        case mx::bool_: return total(static_cast<const bool*>(data)[i], static_cast<const bool*>(data)[j]);
        case mx::int32: return total(static_cast<const int32_t*>(data)[i], static_cast<const int32_t*>(data)[j]);
        case mx::uint32: return total(static_cast<const uint32_t*>(data)[i], static_cast<const uint32_t*>(data)[j]);
        case mx::float32: return total(static_cast<const float*>(data)[i], static_cast<const float*>(data)[j]);
        case mx::float64: return total(static_cast<const double*>(data)[i], static_cast<const double*>(data)[j]);
        default: return 0;
      }
    }
  };

  int axis_;
  bool descending_;
};

// The row permutation that LU's row swaps (`pivots[i]`: row i swapped with that row, in
// order) amount to, per matrix: what QIR's `lu` returns beside the pivots.
class PermutationFromPivots : public mx::UnaryPrimitive {
 public:
  PermutationFromPivots(mx::Stream stream, int rows)
      : mx::UnaryPrimitive(stream), rows_(rows) {}

  void eval_cpu(const std::vector<mx::array>& inputs, mx::array& out) override {
    const auto& piv = inputs[0];
    out.set_data(mx::allocator::malloc(out.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    encoder.set_input_array(piv);
    encoder.set_output_array(out);
    size_t k = piv.shape().back(), n = static_cast<size_t>(rows_);
    size_t matrices = k == 0 ? out.size() / std::max<size_t>(n, 1) : piv.size() / k;
    encoder.dispatch([src = piv.data<int32_t>(), dst = out.data<int32_t>(), k, n, matrices]() {
      for (size_t m = 0; m < matrices; ++m) {
        int32_t* p = dst + m * n;
        for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(i);
        for (size_t i = 0; i < k && i < n; ++i) {
          int32_t j = src[m * k + i];
          // LAPACK's pivots lie in [i, n); anything else would be MLX's bug, left unswapped.
          if (j >= 0 && static_cast<size_t>(j) < n) std::swap(p[i], p[j]);
        }
      }
    });
  }

  void eval_gpu(const std::vector<mx::array>&, mx::array&) override {
    throw std::runtime_error("quabla-mlx's LU permutation runs on the CPU stream only");
  }

  const char* name() const override { return "QuablaPermutationFromPivots"; }

 private:
  int rows_;
};

}  // namespace

extern "C" {

int qmlx_cholesky(const qmlx_array* a, qmlx_array** out) {
  return guarded([&] { give(mx::linalg::cholesky(a->a, false, cpu()), out); });
}

int qmlx_lu(const qmlx_array* a, qmlx_array** lu, qmlx_array** pivots,
            qmlx_array** permutation) {
  return guarded([&] {
    auto [f, piv] = mx::linalg::lu_factor(a->a, cpu());
    auto p = mx::contiguous(mx::astype(piv, mx::int32, cpu()), false, cpu());
    auto shape = p.shape();
    int rows = a->a.shape(-2);
    shape.back() = rows;
    auto stream = mx::default_stream(mx::Device(mx::Device::cpu));
    auto perm = mx::array(shape, mx::int32, std::make_shared<PermutationFromPivots>(stream, rows),
                          {p});
    *lu = new qmlx_array{f};
    *pivots = new qmlx_array{p};
    *permutation = new qmlx_array{perm};
  });
}

int qmlx_qr(const qmlx_array* a, qmlx_array** q, qmlx_array** r) {
  return guarded([&] {
    auto [qq, rr] = mx::linalg::qr(a->a, cpu());
    *q = new qmlx_array{qq};
    *r = new qmlx_array{rr};
  });
}

int qmlx_svd(const qmlx_array* a, int compute_uv, qmlx_array** u, qmlx_array** s,
             qmlx_array** vt) {
  return guarded([&] {
    auto parts = mx::linalg::svd(a->a, compute_uv != 0, cpu());
    if (compute_uv != 0) {
      *u = new qmlx_array{parts.at(0)};
      *s = new qmlx_array{parts.at(1)};
      *vt = new qmlx_array{parts.at(2)};
    } else {
      *s = new qmlx_array{parts.at(0)};
    }
  });
}

int qmlx_eigh(const qmlx_array* a, qmlx_array** w, qmlx_array** v) {
  return guarded([&] {
    auto [ww, vv] = mx::linalg::eigh(a->a, "L", cpu());
    *w = new qmlx_array{ww};
    *v = new qmlx_array{vv};
  });
}

int qmlx_solve_triangular(const qmlx_array* a, const qmlx_array* b, int upper,
                          qmlx_array** out) {
  return guarded([&] {
    give(mx::linalg::solve_triangular(a->a, b->a, upper != 0, cpu()), out);
  });
}

int qmlx_sort_permutation(const qmlx_array* const* keys, size_t n, int32_t axis, int descending,
                          qmlx_array** out) {
  return guarded([&] {
    if (n == 0) throw std::invalid_argument("qmlx_sort_permutation needs a key");
    std::vector<mx::array> ks;
    for (size_t i = 0; i < n; ++i) {
      auto dt = keys[i]->a.dtype();
      if (dt != mx::bool_ && dt != mx::int32 && dt != mx::uint32 && dt != mx::float32 &&
          dt != mx::float64) {
        throw std::invalid_argument("qmlx_sort_permutation: a key of an unsupported dtype");
      }
      ks.push_back(mx::contiguous(keys[i]->a, false, cpu()));
    }
    auto shape = ks[0].shape();
    if (axis < 0 || axis >= static_cast<int32_t>(shape.size())) {
      throw std::invalid_argument("qmlx_sort_permutation: axis out of range");
    }
    auto stream = mx::default_stream(mx::Device(mx::Device::cpu));
    give(mx::array(shape, mx::int32,
                   std::make_shared<SortPermutation>(stream, axis, descending != 0), ks),
         out);
  });
}

int qmlx_take_along_axis(const qmlx_array* a, const qmlx_array* indices, int32_t axis,
                         qmlx_array** out) {
  return guarded([&] { give(mx::take_along_axis(a->a, indices->a, axis, compute()), out); });
}

int qmlx_libm(int fn, const qmlx_array* a, qmlx_array** out) {
  return guarded([&] {
    if (fn < 0 || fn >= QMLX_LIBM_COUNT) {
      throw std::invalid_argument("unknown libm function code " + std::to_string(fn));
    }
    auto dt = a->a.dtype();
    if (dt != mx::float32 && dt != mx::float64) {
      throw std::invalid_argument("qmlx_libm takes float32 or float64");
    }
    auto x = mx::contiguous(a->a, false, cpu());
    auto stream = mx::default_stream(mx::Device(mx::Device::cpu));
    give(mx::array(x.shape(), dt, std::make_shared<Libm>(stream, fn), {x}), out);
  });
}

const char* qmlx_last_error(void) { return last_error.c_str(); }

void qmlx_set_error(const char* message) { last_error = message ? message : ""; }

struct qmlx_compiled {
  std::function<std::vector<mx::array>(const std::vector<mx::array>&)> f;
};

int qmlx_compile(qmlx_trace_fn trace, void* payload, size_t nout, qmlx_compiled** out) {
  return guarded([&] {
    // The trace callback is Rust: it sees handles, never C++ objects, and reports failure as
    // a status, which becomes an exception here, inside MLX's tracing, where MLX expects one.
    auto traced = [trace, payload, nout](const std::vector<mx::array>& inputs) {
      std::vector<qmlx_array*> in;
      in.reserve(inputs.size());
      for (const auto& a : inputs) in.push_back(new qmlx_array{a});
      std::vector<qmlx_array*> outs(nout, nullptr);
      int status = trace(payload, in.data(), in.size(), outs.data(), nout);
      for (auto* h : in) delete h;
      std::vector<mx::array> result;
      bool complete = true;
      for (auto* h : outs) {
        if (h == nullptr) {
          complete = false;
          continue;
        }
        result.push_back(h->a);
        delete h;
      }
      if (status != 0) throw std::runtime_error(last_error);
      if (!complete) throw std::runtime_error("a compiled group's trace left an output unset");
      return result;
    };
    *out = new qmlx_compiled{mx::compile(std::move(traced), false)};
  });
}

int qmlx_compiled_call(const qmlx_compiled* f, qmlx_array* const* inputs, size_t n,
                       qmlx_array** outputs, size_t nout) {
  return guarded([&] {
    std::vector<mx::array> in;
    in.reserve(n);
    for (size_t i = 0; i < n; ++i) in.push_back(inputs[i]->a);
    auto result = f->f(in);
    if (result.size() != nout) {
      throw std::length_error("a compiled group gave " + std::to_string(result.size()) +
                              " results for " + std::to_string(nout));
    }
    for (size_t i = 0; i < nout; ++i) give(result[i], &outputs[i]);
  });
}

void qmlx_compiled_free(qmlx_compiled* f) { delete f; }

const char* qmlx_version(void) { return mx::version(); }

int qmlx_enum_count(int which) {
  switch (which) {
    case 0: return QMLX_UNARY_COUNT;
    case 1: return QMLX_BINARY_COUNT;
    case 2: return QMLX_LIBM_COUNT;
    case 3: return QMLX_REDUCE_COUNT;
  }
  return -1;
}

int qmlx_from_bytes(int dtype, const int32_t* shape, size_t ndim, const void* data,
                    qmlx_array** out) {
  return guarded([&] {
    auto t = dtype_of(dtype);
    auto s = shape_of(shape, ndim);
    switch (dtype) {
      case QMLX_BOOL: give(mx::array(static_cast<const bool*>(data), s, t), out); break;
      case QMLX_I32: give(mx::array(static_cast<const int32_t*>(data), s, t), out); break;
      case QMLX_U32: give(mx::array(static_cast<const uint32_t*>(data), s, t), out); break;
      case QMLX_F32: give(mx::array(static_cast<const float*>(data), s, t), out); break;
      case QMLX_F64: give(mx::array(static_cast<const double*>(data), s, t), out); break;
    }
  });
}

int qmlx_to_bytes(const qmlx_array* a, void* dst, size_t nbytes) {
  return guarded([&] {
    auto c = mx::contiguous(a->a, false, cpu());
    c.eval();
    if (c.nbytes() != nbytes) {
      throw std::length_error("qmlx_to_bytes: " + std::to_string(c.nbytes()) +
                              " bytes in the array, " + std::to_string(nbytes) + " asked for");
    }
    if (nbytes > 0) std::memcpy(dst, c.data<char>(), nbytes);
  });
}

int qmlx_gpu_available(void) {
  try {
    return mx::is_available(mx::Device(mx::Device::gpu)) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void qmlx_select_gpu(int gpu) { on_gpu.store(gpu != 0); }

int qmlx_async_eval(qmlx_array* const* arrays, size_t n) {
  return guarded([&] {
    std::vector<mx::array> v;
    for (size_t i = 0; i < n; ++i) v.push_back(arrays[i]->a);
    mx::async_eval(v);
  });
}

int qmlx_is_available(const qmlx_array* a) { return a->a.is_available() ? 1 : 0; }

int qmlx_eval(qmlx_array* const* arrays, size_t n) {
  return guarded([&] {
    std::vector<mx::array> v;
    for (size_t i = 0; i < n; ++i) v.push_back(arrays[i]->a);
    mx::eval(v);
  });
}

void qmlx_free(qmlx_array* a) { delete a; }

int qmlx_unary(int op, const qmlx_array* a, qmlx_array** out) {
  return guarded([&] {
    const auto& x = a->a;
    auto s = compute();
    switch (op) {
      case QMLX_NEG: give(mx::negative(x, s), out); return;
      case QMLX_ABS: give(mx::abs(x, s), out); return;
      case QMLX_SIGN: give(mx::sign(x, s), out); return;
      case QMLX_FLOOR: give(mx::floor(x, s), out); return;
      case QMLX_CEIL: give(mx::ceil(x, s), out); return;
      case QMLX_ROUND_EVEN: give(mx::round(x, s), out); return;
      case QMLX_EXPM1: give(mx::expm1(x, s), out); return;
      case QMLX_LOG: give(mx::log(x, s), out); return;
      case QMLX_LOG1P: give(mx::log1p(x, s), out); return;
      case QMLX_SQRT: give(mx::sqrt(x, s), out); return;
      case QMLX_RSQRT: give(mx::rsqrt(x, s), out); return;
      case QMLX_TAN: give(mx::tan(x, s), out); return;
      case QMLX_ASIN: give(mx::arcsin(x, s), out); return;
      case QMLX_ACOS: give(mx::arccos(x, s), out); return;
      case QMLX_ATAN: give(mx::arctan(x, s), out); return;
      case QMLX_SINH: give(mx::sinh(x, s), out); return;
      case QMLX_COSH: give(mx::cosh(x, s), out); return;
      case QMLX_TANH: give(mx::tanh(x, s), out); return;
      case QMLX_ASINH: give(mx::arcsinh(x, s), out); return;
      case QMLX_ACOSH: give(mx::arccosh(x, s), out); return;
      case QMLX_ATANH: give(mx::arctanh(x, s), out); return;
      case QMLX_ISFINITE: give(mx::isfinite(x, s), out); return;
      case QMLX_ISNAN: give(mx::isnan(x, s), out); return;
      case QMLX_LOGICAL_NOT: give(mx::logical_not(x, s), out); return;
      case QMLX_BITWISE_NOT: give(mx::bitwise_invert(x, s), out); return;
    }
    throw std::invalid_argument("unknown unary op code " + std::to_string(op));
  });
}

int qmlx_binary(int op, const qmlx_array* a, const qmlx_array* b, qmlx_array** out) {
  return guarded([&] {
    const auto &x = a->a, &y = b->a;
    auto s = compute();
    switch (op) {
      case QMLX_ADD: give(mx::add(x, y, s), out); return;
      case QMLX_SUB: give(mx::subtract(x, y, s), out); return;
      case QMLX_MUL: give(mx::multiply(x, y, s), out); return;
      case QMLX_DIVIDE: give(mx::divide(x, y, s), out); return;
      case QMLX_FLOOR_DIVIDE: give(mx::floor_divide(x, y, s), out); return;
      case QMLX_REMAINDER: give(mx::remainder(x, y, s), out); return;
      case QMLX_POWER: give(mx::power(x, y, s), out); return;
      case QMLX_MAXIMUM: give(mx::maximum(x, y, s), out); return;
      case QMLX_MINIMUM: give(mx::minimum(x, y, s), out); return;
      case QMLX_ATAN2: give(mx::arctan2(x, y, s), out); return;
      case QMLX_LOGICAL_AND: give(mx::logical_and(x, y, s), out); return;
      case QMLX_LOGICAL_OR: give(mx::logical_or(x, y, s), out); return;
      case QMLX_BITWISE_AND: give(mx::bitwise_and(x, y, s), out); return;
      case QMLX_BITWISE_OR: give(mx::bitwise_or(x, y, s), out); return;
      case QMLX_BITWISE_XOR: give(mx::bitwise_xor(x, y, s), out); return;
      case QMLX_SHIFT_LEFT: give(mx::left_shift(x, y, s), out); return;
      case QMLX_SHIFT_RIGHT: give(mx::right_shift(x, y, s), out); return;
      case QMLX_EQ: give(mx::equal(x, y, s), out); return;
      case QMLX_NE: give(mx::not_equal(x, y, s), out); return;
      case QMLX_LT: give(mx::less(x, y, s), out); return;
      case QMLX_LE: give(mx::less_equal(x, y, s), out); return;
      case QMLX_GT: give(mx::greater(x, y, s), out); return;
      case QMLX_GE: give(mx::greater_equal(x, y, s), out); return;
    }
    throw std::invalid_argument("unknown binary op code " + std::to_string(op));
  });
}

int qmlx_where(const qmlx_array* c, const qmlx_array* a, const qmlx_array* b, qmlx_array** out) {
  return guarded([&] { give(mx::where(c->a, a->a, b->a, compute()), out); });
}

int qmlx_astype(const qmlx_array* a, int dtype, qmlx_array** out) {
  return guarded([&] { give(mx::astype(a->a, dtype_of(dtype), compute()), out); });
}

int qmlx_view(const qmlx_array* a, int dtype, qmlx_array** out) {
  return guarded([&] { give(mx::view(a->a, dtype_of(dtype), compute()), out); });
}

int qmlx_arange(int32_t n, int dtype, qmlx_array** out) {
  return guarded([&] { give(mx::astype(mx::arange(0, n, 1, compute()), dtype_of(dtype), compute()), out); });
}

int qmlx_broadcast_to(const qmlx_array* a, const int32_t* shape, size_t ndim, qmlx_array** out) {
  return guarded([&] { give(mx::broadcast_to(a->a, shape_of(shape, ndim), compute()), out); });
}

int qmlx_reshape(const qmlx_array* a, const int32_t* shape, size_t ndim, qmlx_array** out) {
  return guarded([&] { give(mx::reshape(a->a, shape_of(shape, ndim), compute()), out); });
}

int qmlx_transpose(const qmlx_array* a, const int32_t* perm, size_t ndim, qmlx_array** out) {
  return guarded([&] { give(mx::transpose(a->a, ints(perm, ndim), compute()), out); });
}

int qmlx_slice(const qmlx_array* a, const int32_t* start, const int32_t* stop,
               const int32_t* strides, size_t ndim, qmlx_array** out) {
  return guarded([&] {
    give(mx::slice(a->a, shape_of(start, ndim), shape_of(stop, ndim), shape_of(strides, ndim),
                   compute()),
         out);
  });
}

int qmlx_pad(const qmlx_array* a, const int32_t* low, const int32_t* high, size_t ndim,
             const qmlx_array* value, qmlx_array** out) {
  return guarded([&] {
    std::vector<int> axes(ndim);
    for (size_t i = 0; i < ndim; ++i) axes[i] = static_cast<int>(i);
    give(mx::pad(a->a, axes, shape_of(low, ndim), shape_of(high, ndim), value->a, "constant",
                 compute()),
         out);
  });
}

int qmlx_concatenate(const qmlx_array* const* arrays, size_t n, int32_t axis, qmlx_array** out) {
  return guarded([&] {
    std::vector<mx::array> v;
    for (size_t i = 0; i < n; ++i) v.push_back(arrays[i]->a);
    give(mx::concatenate(v, axis, compute()), out);
  });
}

int qmlx_flip(const qmlx_array* a, int32_t axis, qmlx_array** out) {
  return guarded([&] { give(mx::flip(a->a, axis, compute()), out); });
}

int qmlx_reduce(int kind, const qmlx_array* a, const int32_t* axes, size_t naxes,
                qmlx_array** out) {
  return guarded([&] {
    auto ax = ints(axes, naxes);
    auto s = compute();
    switch (kind) {
      case QMLX_SUM: give(mx::sum(a->a, ax, false, s), out); return;
      case QMLX_PROD: give(mx::prod(a->a, ax, false, s), out); return;
      case QMLX_MAX: give(mx::max(a->a, ax, false, s), out); return;
      case QMLX_MIN: give(mx::min(a->a, ax, false, s), out); return;
      case QMLX_ALL: give(mx::all(a->a, ax, false, s), out); return;
      case QMLX_ANY: give(mx::any(a->a, ax, false, s), out); return;
    }
    throw std::invalid_argument("unknown reduction code " + std::to_string(kind));
  });
}

int qmlx_cumulative(int kind, const qmlx_array* a, int32_t axis, int reverse, qmlx_array** out) {
  return guarded([&] {
    auto s = compute();
    bool r = reverse != 0;
    switch (kind) {
      case QMLX_SUM: give(mx::cumsum(a->a, axis, r, true, std::nullopt, s), out); return;
      case QMLX_PROD: give(mx::cumprod(a->a, axis, r, true, s), out); return;
      case QMLX_MAX: give(mx::cummax(a->a, axis, r, true, s), out); return;
      case QMLX_MIN: give(mx::cummin(a->a, axis, r, true, s), out); return;
    }
    throw std::invalid_argument("unknown cumulative code " + std::to_string(kind));
  });
}

int qmlx_matmul(const qmlx_array* a, const qmlx_array* b, qmlx_array** out) {
  return guarded([&] { give(mx::matmul(a->a, b->a, compute()), out); });
}

int qmlx_gather(const qmlx_array* a, const qmlx_array* const* indices, size_t n,
                const int32_t* axes, const int32_t* slice_sizes, size_t ndim, qmlx_array** out) {
  return guarded([&] {
    std::vector<mx::array> idx;
    for (size_t i = 0; i < n; ++i) idx.push_back(indices[i]->a);
    give(mx::gather(a->a, idx, ints(axes, n), shape_of(slice_sizes, ndim), compute()), out);
  });
}

int qmlx_scatter_add(const qmlx_array* a, const qmlx_array* const* indices, size_t n,
                     const qmlx_array* updates, const int32_t* axes, qmlx_array** out) {
  return guarded([&] {
    std::vector<mx::array> idx;
    for (size_t i = 0; i < n; ++i) idx.push_back(indices[i]->a);
    give(mx::scatter_add(a->a, idx, updates->a, ints(axes, n), compute()), out);
  });
}

int qmlx_dynamic_slice(const qmlx_array* a, const qmlx_array* start, const int32_t* axes,
                       size_t naxes, const int32_t* sizes, size_t ndim, qmlx_array** out) {
  return guarded([&] {
    give(mx::slice(a->a, start->a, ints(axes, naxes), shape_of(sizes, ndim), compute()), out);
  });
}

int qmlx_dynamic_update_slice(const qmlx_array* a, const qmlx_array* update,
                              const qmlx_array* start, const int32_t* axes, size_t naxes,
                              qmlx_array** out) {
  return guarded([&] {
    give(mx::slice_update(a->a, update->a, start->a, ints(axes, naxes), compute()), out);
  });
}

}  // extern "C"
