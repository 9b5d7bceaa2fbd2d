// main() of a perf worker (labNN_perf): see workbook::perf::worker_main.
#include <workbook/perf.hpp>

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  try {
    return workbook::perf::worker_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 2;
  }
}
