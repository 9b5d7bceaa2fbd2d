// Mistake: matmul_offset_uncorrected.cpp (A + 128, never corrected), as the test of the whole
// pipeline's error bound sees it: through quantized_matmul, which calls matmul_int8.
// Checked by: QuantizedMatmul.AccuracyAgainstFloat32WithinTheDerivedBound
// Expect: Checked step by step against the oracle, the cause is: quantized_matmul
// Expect: your output matches the scales times (a + 128) * b without the correction
#include "matmul_offset_uncorrected.cpp"
#include "quantized_matmul_calls_matmul_int8.hpp"
