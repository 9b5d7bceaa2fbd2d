// main() of every GPU test executable: skips cleanly without a GPU (see internal/cuda/testing.hpp).
#include <workbook/internal/cuda/testing.hpp>

int main(int argc, char** argv) {
  return workbook::cuda::testing::main(argc, argv);
}
