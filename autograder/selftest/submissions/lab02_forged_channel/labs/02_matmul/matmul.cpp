// Self-test submission: matmul is the stub, plus a forgery of the grader's channel as a real
// attacker would write it. Called inside a visible test, matmul finds the grader's nonce in the
// process's memory, writes the records of a passed test on fd 3 and exits 0, so every visible test
// of matmul reports "passed" on the channel. Anywhere else (the sealed worker: no nonce there) it
// stays the stub and throws "not implemented": the hidden tests fail, so none of the forged passes
// is credited, and since the stub's message appears only outside the test process, the grader
// flags the function for the instructor. (lab04_forged_channel computes nothing instead.)
#include "matmul.hpp"

#include "forge_a_pass.hpp"

#include <workbook/not_implemented.hpp>

namespace lab02 {

void matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
            const MatmulShape& shape) {
  forge_a_pass();
  require_valid_arguments(a, b, c, shape);  // sizes, leading dimensions, C apart from A and B
  throw workbook::NotImplemented("matmul");
}

}  // namespace lab02
