// workbook-probe: measures this machine's ceilings (or shows the cached ones) and prints them with
// the ridge points they imply. The perf tests and the bench read the same cache.
#include <workbook/ceilings.hpp>
#include <workbook/internal/command_line.hpp>
#include <workbook/report.hpp>

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  std::string cache = workbook::default_ceilings_path();
  bool remeasure = false, json = false;
  CLI::App app{
      "Prints the machine's measured ceilings (memory bandwidth, L1 loads, FMA peak), measuring "
      "them first "
      "when the cache holds none for this machine.",
      "workbook-probe"};
  app.option_defaults()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);  // the last --cache wins
  app.add_option("--cache", cache,
                 "the ceilings cache (default: $WORKBOOK_CEILINGS, else ./workbook-ceilings.json)")
      ->capture_default_str();
  app.add_flag("--remeasure", remeasure,
               "measure again even if cached (close other programs first)");
  app.add_flag("--json", json, "print the cache's JSON instead of the table");
  if (const std::optional<int> code = workbook::parse_command_line(app, argc, argv)) return *code;
  try {
    const workbook::Ceilings c = workbook::load_or_measure_ceilings(
        cache, remeasure, [](const std::string& line) { std::cerr << "  " << line << std::endl; });
    if (json) {
      std::cout << c.to_json().dump(2) << "\n";
      return 0;
    }
    using workbook::format_fixed;
    std::cout << "Machine: " << c.machine.cpu_model << ", " << c.machine.logical_cpus
              << " logical CPUs, " << c.machine.simd << " (" << c.machine.simd_bytes * 8
              << "-bit SIMD), " << c.machine.compiler << "\n"
              << "Measured " << c.measured_at << "; cached in " << cache
              << " (--remeasure to redo)\n\n";
    workbook::Table t({"ceiling", "value", "unit"});
    t.add({"copy, 1 thread (best of the two below)", format_fixed(c.copy_1t_gbs), "GB/s"});
    t.add({"  ordinary stores (read-for-ownership)", format_fixed(c.copy_regular_1t_gbs), "GB/s"});
    t.add({"  streaming stores", format_fixed(c.copy_streaming_1t_gbs), "GB/s"});
    t.add(
        {"copy, " + std::to_string(c.threads) + " threads", format_fixed(c.copy_all_gbs), "GB/s"});
    t.add({"triad, 1 thread", format_fixed(c.triad_1t_gbs), "GB/s"});
    t.add({"triad, " + std::to_string(c.threads) + " threads", format_fixed(c.triad_all_gbs),
           "GB/s"});
    t.add({"reads, 1 thread", format_fixed(c.read_1t_gbs), "GB/s"});
    t.add(
        {"reads, " + std::to_string(c.threads) + " threads", format_fixed(c.read_all_gbs), "GB/s"});
    t.add({"L1 loads, 1 core", format_fixed(c.l1_read_1t_gbs), "GB/s"});
    t.add({"fp32 FMA peak, 1 core", format_fixed(c.fma_1t_gflops), "GFLOP/s"});
    t.add({"fp32 FMA peak, " + std::to_string(c.threads) + " threads",
           format_fixed(c.fma_all_gflops), "GFLOP/s"});
    t.add({"int8 dot peak, 1 core (" + c.int8_dot_instruction + ")",
           format_fixed(c.int8_dot_1t_gops), "GOP/s"});
    t.add({"int8 dot peak, " + std::to_string(c.threads) + " threads",
           format_fixed(c.int8_dot_all_gops), "GOP/s"});
    t.add({"cache knee (working set)", std::to_string(c.cache_knee_bytes >> 20), "MiB"});
    std::cout << t.str()
              << "\nRidge points (FLOP per byte where memory-bound becomes compute-bound):\n"
              << "  1 thread, from memory: " << format_fixed(c.fma_1t_gflops / c.copy_1t_gbs, 2)
              << "\n"
              << "  " << c.threads
              << " threads, from memory: " << format_fixed(c.fma_all_gflops / c.copy_all_gbs, 2)
              << "\n"
              << "  1 core, from L1: " << format_fixed(c.fma_1t_gflops / c.l1_read_1t_gbs, 2)
              << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "workbook-probe: " << e.what() << "\n";
    return 1;
  }
}
