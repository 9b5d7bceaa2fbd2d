#include <workbook/seed.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

namespace workbook {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__extension__ typedef unsigned __int128 uint128;  // GCC and Clang

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

std::uint64_t read_base_seed() {
  if (const char* text = std::getenv("WORKBOOK_SEED"); text != nullptr && *text != '\0')
    return parse_seed(text);
  std::random_device device;
  // Keep seeds short enough to type: 9 decimal digits.
  return (static_cast<std::uint64_t>(device()) << 32 | device()) % 1'000'000'000ull;
}

}  // namespace

std::uint64_t parse_seed(std::string_view text) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw std::invalid_argument("WORKBOOK_SEED='" + std::string(text) +
                                "' is not a decimal number (use the one printed with a failure)");
  return value;
}

std::uint64_t base_seed() {
  static const std::uint64_t seed = read_base_seed();
  return seed;
}

std::uint64_t seed_for(std::string_view name) {
  std::uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a of the name, mixed with the base seed
  for (unsigned char c : name) h = (h ^ c) * 0x100000001B3ull;
  std::uint64_t x = base_seed() ^ h;
  return splitmix64(x);
}

Rng::Rng(std::uint64_t seed) {
  for (auto& s : state_) s = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1p-53;
}

double Rng::uniform(double lo, double hi) {
  return lo + (hi - lo) * uniform();
}

std::int64_t Rng::integer(std::int64_t lo, std::int64_t hi) {
  if (hi < lo) throw std::invalid_argument("Rng::integer: empty range");
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(next());  // the whole 64-bit range
  // Lemire's unbiased bounded integer: multiply, and reject the few biased draws.
  const std::uint64_t threshold = -span % span;
  for (;;) {
    const uint128 m = static_cast<uint128>(next()) * span;
    if (static_cast<std::uint64_t>(m) >= threshold) return lo + static_cast<std::int64_t>(m >> 64);
  }
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  double u1 = uniform();
  while (u1 <= 0) u1 = uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * 3.14159265358979323846 * u2;
  spare_normal_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

}  // namespace workbook
