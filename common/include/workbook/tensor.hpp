#pragma once
/// \file tensor.hpp
/// \brief Tensors (xtensor aliases) and seeded input generators.
///
/// The harness and the tests hold data in xtensor containers; kernels take std::span views of them,
/// so a student sees memory as it is. Generators draw from a workbook::Rng (see seed.hpp). Aligned
/// and guarded buffers are in buffer.hpp.

#include <workbook/buffer.hpp>
#include <workbook/seed.hpp>

#include <cstdint>
#include <span>

#include <xtensor/xtensor.hpp>

/// The harness every lab links: inputs, checks against a float64 oracle, timing, measured
/// ceilings, the roofline and the reports. One header per concern, under `<workbook/...>`.
namespace workbook {

/// A float32 vector; with XTENSOR_USE_XSIMD its storage is SIMD-aligned.
using Vector = xt::xtensor<float, 1>;
/// A row-major float32 matrix.
using Matrix = xt::xtensor<float, 2>;

/// A read-only view of a contiguous xtensor container, as kernels take it.
template <class E>
auto as_span(const E& e) {
  return std::span<const typename E::value_type>(e.data(), e.size());
}
/// A writable view of a contiguous xtensor container.
template <class E>
auto as_span(E& e) {
  return std::span<typename E::value_type>(e.data(), e.size());
}

// --- Generators ----------------------------------------------------------------------------------

/// n draws from N(mean, stddev^2), rounded to float.
Vector normal(std::size_t n, Rng& rng, double mean = 0.0, double stddev = 1.0);
/// n draws uniform in [lo, hi).
Vector uniform(std::size_t n, Rng& rng, double lo = -1.0, double hi = 1.0);
/// A rows x cols matrix of N(0, 1) draws.
Matrix normal_matrix(std::size_t rows, std::size_t cols, Rng& rng);
/// n integers uniform in [lo, hi] (default the symmetric int8 range [-127, 127]).
xt::xtensor<std::int8_t, 1> int8_uniform(std::size_t n, Rng& rng, int lo = -127, int hi = 127);

/// Which special values adversarial() mixes in.
enum class Specials {
  finite,  ///< +-0, denormals, tiny and huge finite values
  all,     ///< the finite ones plus NaN and +-infinity
};
/// Inputs that break careless kernels: about half ordinary N(0,1) values, the rest +-0, denormals,
/// values next to FLT_MIN, huge values (+-1e37 .. FLT_MAX) and, with Specials::all, NaN and +-inf.
Vector adversarial(std::size_t n, Rng& rng, Specials specials = Specials::all);

}  // namespace workbook
