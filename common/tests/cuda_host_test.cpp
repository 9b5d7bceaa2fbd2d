// The GPU side of the harness, the parts that need no GPU: the ncu reader and verdicts, the
// messages of failed CUDA calls, the device query on a machine without a GPU, and the GPU roofs.
#include <workbook/cuda/check.hpp>
#include <workbook/cuda/device.hpp>
#include <workbook/cuda/memcheck.hpp>
#include <workbook/internal/cuda/ncu.hpp>
#include <workbook/report.hpp>
#include <workbook/roofline.hpp>
#include <workbook/skip.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using ::testing::HasSubstr;
namespace ncu = workbook::cuda::ncu;

// What `ncu --csv --page raw --print-units base` writes to its log: its own messages, a header,
// a units row, then one row per kernel (numbers with thousands separators, names with commas).
const char* kLog =
    "==PROF== Connected to process 4242 (/build/lab05_perf)\n"
    "==PROF== Profiling \"square_kernel\": 0%....50%....100% - 9 passes\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel "
    "Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid "
    "Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"dram__"
    "throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__time_duration."
    "sum\",\"launch__registers_per_thread\","
    "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"sm__warps_active.avg.pct_of_peak_"
    "sustained_active\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"byte\",\"byte\",\"%\",\"%\","
    "\"nsecond\",\"register/thread\",\"%\",\"%\"\n"
    "\"0\",\"4242\",\"lab05_perf\",\"127.0.0.1\",\"void square<4>(const float *, float *, unsigned "
    "long)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(1056, 1, "
    "1)\",\"0\",\"9.0\",\"400,000,128\",\"400,001,024\",\"92.5\",\"92.7\",\"270,112\",\"32\",\"11."
    "3\",\"88.1\"\n"
    "\"1\",\"4242\",\"lab05_perf\",\"127.0.0.1\",\"void square<4>(const float *, float *, unsigned "
    "long)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(1056, 1, "
    "1)\",\"0\",\"9.0\",\"400,000,000\",\"400,000,000\",\"93.5\",\"93.7\",\"269,888\",\"32\",\"11."
    "7\",\"87.9\"\n"
    "==PROF== Disconnected from process 4242\n";

TEST(Ncu, ReadsTheRawCsvPage) {
  const std::vector<ncu::Launch> launches = ncu::parse_csv(kLog);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].kernel, "void square<4>(const float *, float *, unsigned long)");
  EXPECT_EQ(launches[0].grid, "(1056, 1, 1)");
  EXPECT_DOUBLE_EQ(launches[0].seconds, 270112e-9);
  EXPECT_DOUBLE_EQ(launches[0].memory_pct, 92.7);
  EXPECT_DOUBLE_EQ(launches[0].compute_pct, 11.3);
  EXPECT_DOUBLE_EQ(launches[0].dram_bytes, 800001152);
  EXPECT_DOUBLE_EQ(launches[1].registers, 32);
}

TEST(Ncu, MergesTheKernelsOfOneRunWeightedByTime) {
  ncu::Launch a, b;
  a.kernel = "mean";
  a.seconds = 1e-6;
  a.memory_pct = 90;
  a.dram_bytes = 100;
  b.kernel = "normalize";
  b.seconds = 3e-6;
  b.memory_pct = 50;
  b.dram_bytes = 200;
  const ncu::Launch m = ncu::merge({a, b});
  EXPECT_EQ(m.kernel, "mean + normalize");
  EXPECT_DOUBLE_EQ(m.seconds, 4e-6);
  EXPECT_DOUBLE_EQ(m.memory_pct, 60);  // (90 * 1 + 50 * 3) / 4
  EXPECT_DOUBLE_EQ(m.dram_bytes, 300);
}

TEST(Ncu, TrafficNotesNameRepeatedAndUncoalescedReads) {
  // A slow square of 100 M floats (800 MB of work): a grid-stride step of blockDim.x (the L2
  // serves each element to every block), and contiguous chunks per thread (a sector per thread).
  const std::string repeated = R"({"work_bytes": 8e8, "ncu": {"dram_bytes_per_run": 8.1e8,
      "l2_bytes_per_run": 4.2e11, "load_sector_use_pct": 100}})";
  std::vector<std::string> notes = ncu::traffic_notes(repeated);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("the L2 cache served 420000.0 MB, 525.0x the 800.0 MB"));
  const std::string chunks = R"({"work_bytes": 8e8, "ncu": {"dram_bytes_per_run": 1.6e9,
      "l2_bytes_per_run": 1.5e9, "load_sector_use_pct": 12.5}})";
  notes = ncu::traffic_notes(chunks);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("12% of the bytes were used"));
  EXPECT_THAT(notes[1], HasSubstr("moved 1600.0 MB to and from device memory, 2.0x the 800.0 MB"));
  EXPECT_THAT(notes[1], HasSubstr("the uncoalesced loads above"));
  // Traffic that matches the work, a record of an older ncu (no such metrics), or no record.
  EXPECT_TRUE(ncu::traffic_notes(R"({"work_bytes": 8e8, "ncu": {"dram_bytes_per_run": 8e8,
      "l2_bytes_per_run": 8.2e8, "load_sector_use_pct": 100}})")
                  .empty());
  EXPECT_TRUE(
      ncu::traffic_notes(R"({"work_bytes": 8e8, "ncu": {"dram_bytes_per_run": 8e8}})").empty());
  EXPECT_TRUE(ncu::traffic_notes("not json").empty());
}

TEST(Ncu, ClassifiesAsKernelAgentDoes) {
  EXPECT_EQ(ncu::classify(12, 93, 0.97).bound, workbook::Bound::memory);
  EXPECT_TRUE(ncu::classify(12, 93, 0.97).at_roofline);
  EXPECT_THAT(ncu::classify(12, 93, 0.97).text,
              HasSubstr("at the roofline (97% of the measured roof)"));
  EXPECT_EQ(ncu::classify(85, 40, 0.5).bound, workbook::Bound::compute);
  EXPECT_EQ(ncu::classify(59, 59.9, 0.95).bound, workbook::Bound::underutilized);
  EXPECT_THAT(ncu::classify(30, 40, 0.3).text, HasSubstr("both under 60%"));
  EXPECT_FALSE(ncu::classify(30, 95, 0.89).at_roofline);
}

TEST(Ncu, SaysClearlyWhenTheCountersAreNotAccessible) {
  const auto why = ncu::explain_failure(
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters");
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(*why, HasSubstr("may not read this GPU's performance counters"));
  EXPECT_THAT(
      *ncu::explain_failure("==ERROR== Failed to initialize the profiler: LibraryNotLoaded"),
      HasSubstr("not accessible"));
  EXPECT_FALSE(ncu::explain_failure(kLog).has_value());
  EXPECT_THROW(ncu::parse_csv("==PROF== nothing here\n"), std::runtime_error);
}

TEST(CudaCheck, AFailedCallNamesTheCallTheFileAndTheLine) {
  try {
    WORKBOOK_CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL() << "WORKBOOK_CUDA_CHECK did not throw";
  } catch (const workbook::cuda::Error& e) {
    const std::string m = e.what();
    EXPECT_THAT(m, HasSubstr("common/tests/cuda_host_test.cpp:"));
    EXPECT_THAT(m, HasSubstr("cudaErrorMemoryAllocation failed"));
    EXPECT_THAT(m, HasSubstr("(cudaErrorMemoryAllocation)"));
    EXPECT_EQ(e.code(), cudaErrorMemoryAllocation);
  }
  try {
    workbook::cuda::throw_error(cudaErrorIllegalAddress, "cudaDeviceSynchronize()", __FILE__,
                                __LINE__);
  } catch (const workbook::cuda::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("compute-sanitizer"));  // where to look for the faulting kernel
  }
}

TEST(CudaDevice, EitherADeviceOrAReasonToSkipNeverACrash) {
  // On CI (no driver) this gives a reason; on a GPU machine, none. It must not throw in either
  // case.
  std::optional<std::string> why;
  ASSERT_NO_THROW(why = workbook::cuda::why_no_device());
  if (why) {
    EXPECT_THAT(workbook::cuda::skip_message(*why), HasSubstr("no CUDA device: skipped ("));
    EXPECT_THROW(workbook::cuda::require_device(), workbook::Skipped);
  } else {
    EXPECT_NO_THROW(workbook::cuda::require_device());
    EXPECT_GT(workbook::cuda::device_info().sm_count, 0);
  }
}

workbook::Ceilings gpu_ceilings() {
  workbook::Ceilings c;
  c.device = "NVIDIA H100 80GB HBM3, 132 SMs, sm_90";
  c.threads = 132;
  c.copy_1t_gbs = c.copy_all_gbs = 3000;
  c.read_1t_gbs = c.read_all_gbs = 3200;
  c.triad_1t_gbs = c.triad_all_gbs = 3100;
  c.l1_read_1t_gbs = 9000;
  c.fma_1t_gflops = c.fma_all_gflops = 60000;
  c.measured_at = "test";
  return c;
}

TEST(GpuRoofline, TheRoofsAreTheWholeDevicesWithGpuNames) {
  const workbook::Ceilings c = gpu_ceilings();
  const workbook::Analysis a = workbook::analyze({.ops = 1e8, .bytes = 8e8}, 8e8 / 2.9e12, c);
  EXPECT_EQ(a.roofs.bandwidth_name, "device copy");
  EXPECT_EQ(a.roofs.compute_name, "FMA peak, 132 SMs");
  EXPECT_NEAR(a.fraction_of_roof, 2900.0 / 3000, 1e-9);
  EXPECT_EQ(workbook::roofs_for({.traffic = workbook::Traffic::l1}, c).bandwidth_name,
            "copy in L2");
  // The cache keeps the device; an older cache without it reads as a CPU's.
  EXPECT_EQ(workbook::Ceilings::from_json(c.to_json()).device, c.device);
  auto j = c.to_json();
  j.erase("device");
  EXPECT_TRUE(workbook::Ceilings::from_json(j).device.empty());
}

TEST(GpuRoofline, ThePlotShowsTheGpusRoofsOnly) {
  const std::string svg = workbook::roofline_svg(
      gpu_ceilings(), {{"you", 0.125, 300, workbook::PlotPoint::Role::student}},
      {.title = "square", .bandwidths = {workbook::Traffic::copy}});
  EXPECT_THAT(svg, HasSubstr("device copy 3000.0 GB/s"));
  EXPECT_THAT(svg, HasSubstr("FMA peak, 132 SMs 60000.0 GFLOP/s"));
  EXPECT_THAT(svg, HasSubstr("measured on this GPU"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("1 core")));
}

// compute-sanitizer 13's memcheck reports, as recorded on an H200 (a write past the end of 1000
// floats by a grid of 4 x 256 threads; a shared array of 256 floats written by 512 threads), and a
// misaligned float4 load.
const char* kPastTheEnd =
    "========= COMPUTE-SANITIZER\n"
    "========= Invalid __global__ write of size 4 bytes\n"
    "=========     at lab05::(anonymous namespace)::square_kernel(const float *, float *, "
    "unsigned long)+0xc0 in /src/labs/05_cuda_square/square.cu:23\n"
    "=========     by thread (232,0,0) in block (3,0,0)\n"
    "=========     Access to 0x7ff630804fa0 is out of bounds\n"
    "=========     and is 1 bytes after the nearest allocation at 0x7ff630804000 of size 4,000 "
    "bytes\n"
    "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
    "=========         Host Frame: main [0x8b8d] in probe\n"
    "========= \n";
const char* kSharedOverrun =
    "========= Invalid __shared__ write of size 4 bytes\n"
    "=========     at shared_over(const float *, float *)+0xe0 in probe.cu:27\n"
    "=========     by thread (256,0,0) in block (0,0,0)\n"
    "=========     Access to 0x800 is out of bounds\n"
    "========= \n"
    "========= Invalid __shared__ write of size 4 bytes\n"
    "=========     at shared_over(const float *, float *)+0xe0 in probe.cu:27\n"
    "=========     by thread (257,0,0) in block (0,0,0)\n"
    "=========     Access to 0x804 is out of bounds\n";
const char* kMisaligned =
    "========= Invalid __global__ read of size 16 bytes\n"
    "=========     at normalize_rows(const float *, float *, unsigned long, float)+0x1a0 in "
    "normalize.cu:30\n"
    "=========     by thread (1,0,0) in block (1,0,0)\n"
    "=========     Address 0x7f0000000214 is misaligned\n"
    "=========     and is inside the nearest allocation at 0x7f0000000000 of size 4,096 bytes\n";

TEST(Memcheck, ReadsEveryFieldOfAnInvalidAccess) {
  const std::vector<workbook::cuda::MemoryFault> faults =
      workbook::cuda::parse_memcheck(kPastTheEnd);
  ASSERT_EQ(faults.size(), 1u);
  const workbook::cuda::MemoryFault& f = faults[0];
  EXPECT_EQ(f.kind, workbook::cuda::MemoryFault::Kind::out_of_bounds);
  EXPECT_EQ(f.space, "global");
  EXPECT_EQ(f.access, "write");
  EXPECT_EQ(f.size, 4u);
  EXPECT_EQ(f.kernel, "lab05::square_kernel");
  EXPECT_EQ(f.line, 23);
  EXPECT_EQ(f.thread, (std::array<unsigned, 3>{232, 0, 0}));
  EXPECT_EQ(f.block, (std::array<unsigned, 3>{3, 0, 0}));
  EXPECT_EQ(f.allocation_size, 4000u);
  EXPECT_EQ(f.offset(), 4000);
}

TEST(Memcheck, ExplainsWhereTheAccessFellAgainstItsAllocation) {
  const workbook::cuda::Launch launch{{4, 1, 1}, {256, 1, 1}, 0};
  const std::string past =
      workbook::cuda::explain_faults(workbook::cuda::parse_memcheck(kPastTheEnd), launch);
  EXPECT_THAT(past,
              HasSubstr("your kernel lab05::square_kernel at labs/05_cuda_square/square.cu:23 "
                        "made an invalid 4-byte write of global memory"));
  EXPECT_THAT(past, HasSubstr("the launch was a grid of 4 blocks of 256 threads"));
  EXPECT_THAT(past, HasSubstr("just past the end of an allocation of 4000 bytes (element 1000 of "
                              "an array of 1000 elements"));
  const std::string misaligned =
      workbook::cuda::explain_faults(workbook::cuda::parse_memcheck(kMisaligned), std::nullopt);
  EXPECT_THAT(misaligned, HasSubstr("invalid 16-byte read"));
  EXPECT_THAT(misaligned, HasSubstr("4 bytes past a 16-byte boundary (byte 532 of an allocation"));
  EXPECT_THAT(misaligned, HasSubstr("float4 load or store: 16-byte aligned"));
}

TEST(Memcheck, ASharedArrayOverrunIsMeasuredByTheThreadsThatFault) {
  const workbook::cuda::Launch launch{{1, 1, 1}, {512, 1, 1}, 0};
  const std::string text =
      workbook::cuda::explain_faults(workbook::cuda::parse_memcheck(kSharedOverrun), launch);
  EXPECT_THAT(text, HasSubstr("threads 256 and up of the block fault, each one element further: a "
                              "shared array indexed by threadIdx.x that holds 256 elements of 4 "
                              "bytes, in blocks of 512 threads"));
}

TEST(Memcheck, AReportWithoutFaultsExplainsNothing) {
  EXPECT_TRUE(workbook::cuda::parse_memcheck("========= ERROR SUMMARY: 0 errors\n").empty());
  EXPECT_EQ(workbook::cuda::explain_faults({}, std::nullopt), "");
}

}  // namespace
