// workbook-gpu-probe: measures the GPU's ceilings (or shows the cached ones) and prints them with
// the ridge point they imply. The GPU labs' perf tests and benches read the same cache.
#include <workbook/cuda/ceilings.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/internal/command_line.hpp>
#include <workbook/report.hpp>
#include <workbook/skip.hpp>

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  std::string cache = workbook::cuda::default_ceilings_path();
  bool remeasure = false, json = false;
  CLI::App app{
      "Prints the GPU's measured ceilings (device copy, reads, triad, copy in L2, FMA peak), "
      "measuring them "
      "first when the cache holds none for this GPU. Exit code 77 without a GPU.",
      "workbook-gpu-probe"};
  app.option_defaults()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);  // the last --cache wins
  app.add_option("--cache", cache,
                 "the GPU ceilings cache (default: $WORKBOOK_GPU_CEILINGS, else "
                 "./workbook-gpu-ceilings.json)")
      ->capture_default_str();
  app.add_flag("--remeasure", remeasure,
               "measure again even if cached (close other programs first)");
  app.add_flag("--json", json, "print the cache's JSON instead of the table");
  if (const std::optional<int> code = workbook::parse_command_line(app, argc, argv)) return *code;
  try {
    const workbook::Ceilings c = workbook::cuda::load_or_measure_ceilings(
        cache, remeasure, [](const std::string& line) { std::cerr << "  " << line << std::endl; });
    if (json) {
      std::cout << c.to_json().dump(2) << "\n";
      return 0;
    }
    using workbook::format_fixed;
    std::cout << "GPU: " << workbook::cuda::device_info().describe() << "\n"
              << "Measured " << c.measured_at << "; cached in " << cache
              << " (--remeasure to redo)\n\n";
    workbook::Table t({"ceiling", "value", "unit"});
    t.add({"device copy (read + write)", format_fixed(c.copy_all_gbs), "GB/s"});
    t.add({"device reads", format_fixed(c.read_all_gbs), "GB/s"});
    t.add({"device triad (2 reads + 1 write)", format_fixed(c.triad_all_gbs), "GB/s"});
    t.add({"copy in L2 (read + write)", format_fixed(c.l1_read_1t_gbs), "GB/s"});
    t.add({"fp32 FMA peak, " + std::to_string(c.threads) + " SMs",
           format_fixed(c.fma_all_gflops, 0), "GFLOP/s"});
    std::cout << t.str()
              << "\nRidge point (FLOP per byte where memory-bound becomes compute-bound): "
              << format_fixed(c.fma_all_gflops / c.copy_all_gbs, 1) << " from device memory\n";
    return 0;
  } catch (const workbook::Skipped& e) {
    std::cout << e.what() << "\n";
    return workbook::kSkipReturnCode;
  } catch (const std::exception& e) {
    std::cerr << "workbook-gpu-probe: " << e.what() << "\n";
    return 1;
  }
}
