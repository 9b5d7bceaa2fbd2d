// Mistake: quantize_truncates.cpp (a conversion that truncates), as the round trip through
// quantize and dequantize sees it.
// Checked by: Quantize.RoundTripIsWithinHalfAStep
// Expect: your output matches x / scale truncated toward zero, not rounded
#include "quantize_truncates.cpp"
