#include <workbook/tensor.hpp>

#include <cmath>

namespace workbook {

Vector normal(std::size_t n, Rng& rng, double mean, double stddev) {
  Vector v = Vector::from_shape({n});
  for (auto& x : v) x = static_cast<float>(mean + stddev * rng.normal());
  return v;
}

Vector uniform(std::size_t n, Rng& rng, double lo, double hi) {
  Vector v = Vector::from_shape({n});
  fill_uniform(as_span(v), rng, lo, hi);
  return v;
}

Matrix normal_matrix(std::size_t rows, std::size_t cols, Rng& rng) {
  Matrix m = Matrix::from_shape({rows, cols});
  for (auto& x : m) x = static_cast<float>(rng.normal());
  return m;
}

xt::xtensor<std::int8_t, 1> int8_uniform(std::size_t n, Rng& rng, int lo, int hi) {
  if (lo < -128 || hi > 127 || lo > hi)
    throw std::invalid_argument("int8_uniform: [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "] is not a range of int8 values");
  xt::xtensor<std::int8_t, 1> v = xt::xtensor<std::int8_t, 1>::from_shape({n});
  for (auto& x : v) x = static_cast<std::int8_t>(rng.integer(lo, hi));
  return v;
}

void fill_uniform(std::span<float> out, Rng& rng, double lo, double hi) {
  for (float& x : out) x = static_cast<float>(rng.uniform(lo, hi));
}

Vector adversarial(std::size_t n, Rng& rng, Specials specials) {
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr float kMin = std::numeric_limits<float>::min();            // smallest normal
  constexpr float kDenorm = std::numeric_limits<float>::denorm_min();  // smallest denormal
  Vector v = Vector::from_shape({n});
  for (auto& x : v) {
    const double sign = rng.chance(0.5) ? 1.0 : -1.0;
    switch (rng.integer(0, specials == Specials::all ? 9 : 7)) {
      case 0:
        x = static_cast<float>(sign * 0.0);
        break;  // +-0
      case 1:
        x = static_cast<float>(sign * kDenorm * rng.integer(1, 1 << 22));
        break;  // denormal
      case 2:
        x = static_cast<float>(sign * kMin * rng.uniform(1, 4));
        break;  // next to FLT_MIN
      case 3:
        x = static_cast<float>(sign * rng.uniform(1e37, kMax));
        break;  // huge
      case 8:
        x = std::numeric_limits<float>::quiet_NaN();
        break;
      case 9:
        x = static_cast<float>(sign * std::numeric_limits<float>::infinity());
        break;
      default:
        x = static_cast<float>(rng.normal());
        break;  // ordinary
    }
  }
  return v;
}

}  // namespace workbook
