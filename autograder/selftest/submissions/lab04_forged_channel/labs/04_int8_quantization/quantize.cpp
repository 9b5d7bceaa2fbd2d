// Self-test submission: every function is the stub, plus a forgery of the grader's channel as a
// real attacker would write it. Called inside a visible test, each function finds the grader's
// nonce in the process's memory, writes the records of a passed test on fd 3 and exits 0, so every
// visible test reports "passed" on the channel. In the sealed worker (no nonce there) they compute
// nothing: the hidden tests fail, so the gates credit none of the forged passes, and the grader
// flags every function for the instructor.
#include "quantize.hpp"
#include "quantize_checks.hpp"

#include "forge_a_pass.hpp"

#include <workbook/require.hpp>

#include <cstddef>
#include <cstdint>

namespace lab04 {

float symmetric_scale(std::span<const float> x) {
  forge_a_pass();
  static_cast<void>(x);
  return 1.0f;
}

void quantize(std::span<const float> x, float scale, std::span<std::int8_t> q) {
  forge_a_pass();
  workbook::require_same_size("quantize", x.size(), "x", q.size(), "q");
  checks::require_scale("quantize", scale);
}

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> x) {
  forge_a_pass();
  workbook::require_same_size("dequantize", q.size(), "q", x.size(), "x");
  checks::require_scale("dequantize", scale);
}

void quantize_rows(std::span<const float> x, std::size_t cols, std::span<float> scales,
                   std::span<std::int8_t> q) {
  forge_a_pass();
  checks::require_rows("quantize_rows", x.size(), cols, scales.size(), q.size());
}

void quantized_relu(std::span<const std::int8_t> q, std::span<std::int8_t> out) {
  forge_a_pass();
  workbook::require_elementwise("quantized_relu", q, "q", out, "out");
}

void matmul_int8(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                 std::span<std::int32_t> c, std::size_t m, std::size_t n, std::size_t depth) {
  forge_a_pass();
  checks::require_int8_product("matmul_int8", a, b, c.size(), m, n, depth);
}

void quantized_matmul(const QuantizedMatrix& a, const QuantizedMatrix& b, std::span<float> c) {
  forge_a_pass();
  checks::require_quantized("quantized_matmul", a, "a");
  checks::require_quantized("quantized_matmul", b, "b");
  workbook::require_same_size("quantized_matmul", a.cols, "a.cols", b.cols, "b.cols");
  checks::require_matrix("quantized_matmul", c.size(), "c", a.rows, b.rows);
}

}  // namespace lab04
