// Mistake: quantized_matmul_no_scales.cpp (the integer product, unscaled), as the test of the whole
// pipeline's typical error sees it.
// Checked by: QuantizedMatmul.TypicalErrorFollowsTheModel
// Expect: your output matches the integer sums without the scales
#include "quantized_matmul_no_scales.cpp"
