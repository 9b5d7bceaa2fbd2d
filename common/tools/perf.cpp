// workbook-perf: the perf test of one case. Times the student's kernel against the reference's in
// two worker processes, interleaved, and prints where the kernel stands on the roofline.
// Built twice: workbook-gpu-perf (WORKBOOK_PERF_GPU=1) judges GPU cases against the GPU's roofs.
#include <workbook/perf_driver.hpp>
#include <workbook/report.hpp>
#include <workbook/seed.hpp>
#if WORKBOOK_PERF_GPU
#include <workbook/cuda/ceilings.hpp>
#endif

#include <iostream>
#include <string>

namespace {

int usage(const char* self, int code) {
  (code == 0 ? std::cout : std::cerr)
      << "usage: " << self << " --lab LAB --case NAME --student WORKER\n"
      << "           (--reference WORKER | --profile PROFILE.json | --record-profile PROFILE.json)\n"
      << "           [--max-ratio 1.25] [--edit FILE] [--ceilings FILE] [--results DIR]\n"
      << "           [--max-seconds S] [--timeout S]\n"
      << "  WORKER: a lab's perf executable (labNN_perf); the student's and the reference's are\n"
      << "  run side by side. Exit code 0: within max-ratio of the reference; 1: not (or wrong,\n"
      << "  not implemented, crashed); 2: a setup problem.\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  workbook::perf::DriverOptions o;
  o.ceilings_path = workbook::default_ceilings_path();
#if WORKBOOK_PERF_GPU
  o.ceilings_path = workbook::cuda::default_ceilings_path();
#endif
  o.results = workbook::results_dir();
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") return usage(argv[0], 0);
      if (i + 1 >= argc) return usage(argv[0], 2);
      const std::string v = argv[++i];
      if (a == "--lab") o.lab = v;
      else if (a == "--case") o.case_name = v;
      else if (a == "--student") o.student = v;
      else if (a == "--reference") o.reference = v;
      else if (a == "--profile") o.profile = v;
      else if (a == "--record-profile") o.record_profile = v;
      else if (a == "--max-ratio") o.max_ratio = std::stod(v);
      else if (a == "--edit") o.edit = v;
      else if (a == "--ceilings") o.ceilings_path = v;
      else if (a == "--results") o.results = v;
      else if (a == "--max-seconds") o.timing.max_seconds = std::stod(v);
      else if (a == "--timeout") o.timeout_seconds = std::stod(v);
      else return usage(argv[0], 2);
    }
    const bool judged = !o.reference.empty() || !o.profile.empty() || !o.record_profile.empty();
    if (o.lab.empty() || o.case_name.empty() || o.student.empty() || !judged) return usage(argv[0], 2);
    o.seed = workbook::seed_for(o.lab + "." + o.case_name);
#if WORKBOOK_PERF_GPU
    o.load_ceilings = [&o](const workbook::Progress& progress) {
      return workbook::cuda::load_or_measure_ceilings(o.ceilings_path, false, progress);
    };
#endif
    return workbook::perf::drive(o, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "workbook-perf: " << e.what() << "\n";
    return 2;
  }
}
