// main() of a lab's tests when the autograder runs them. The same GoogleTest tests as the student
// runs, plus a listener that reports each test's start, failures and end on the grader's channel
// (fd 3), every line tagged with the nonce the grader wrote on fd 4.
//
// What this does and does not protect (see autograder/README.md, "Threat model"): the grader reads
// results only from this channel, so printing "[  PASSED  ]", exiting 0, or writing report files
// earns nothing, and a process that ends before its test does fails it. Code in the same process
// can still find the nonce in memory and write records itself: a deliberate forgery of this channel
// is possible, which is why the sealed tests (checked outside the student's process) gate these
// points.
#include <workbook/seed.hpp>
#include <workbook/skip.hpp>
#if defined(WORKBOOK_GRADE_CUDA)
#include <grade/util.hpp>
#include <workbook/cuda/device.hpp>
#endif

#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

class ChannelListener : public ::testing::EmptyTestEventListener {
 public:
  ChannelListener(FILE* channel, std::string nonce) : channel_(channel), nonce_(std::move(nonce)) {}

  void OnTestStart(const ::testing::TestInfo& test) override {
    send({{"event", "start"}, {"test", name(test)}});
  }
  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    if (part.type() == ::testing::TestPartResult::kSuccess) return;
    std::string message = part.message();
    if (message.size() > kMaxMessage)
      message = message.substr(0, kMaxMessage) + "\n[... message cut]";
    send({{"event", part.skipped() ? "skip" : "failure"},
          {"file", part.file_name() ? part.file_name() : ""},
          {"line", part.line_number()},
          {"message", message}});
  }
  void OnTestEnd(const ::testing::TestInfo& test) override {
    const ::testing::TestResult* r = test.result();
    send({{"event", "end"},
          {"test", name(test)},
          {"result", r->Skipped()  ? "skipped"
                     : r->Failed() ? "failed"
                                   : "passed"},
          {"ms", r->elapsed_time()},
          {"seed", workbook::base_seed()}});
  }
  void finish(int code) { send({{"event", "exit"}, {"code", code}}); }
  // A test that cannot run here at all (a GPU lab without a GPU): reported as skipped, with the
  // reason, as ctest reports it, without running it.
  void skipped(const std::string& test, const std::string& why) {
    send({{"event", "start"}, {"test", test}});
    send({{"event", "skip"}, {"file", ""}, {"line", 0}, {"message", why}});
    send({{"event", "end"},
          {"test", test},
          {"result", "skipped"},
          {"ms", 0},
          {"seed", workbook::base_seed()}});
  }

 private:
  static constexpr std::size_t kMaxMessage = 8000;
  static std::string name(const ::testing::TestInfo& t) {
    return std::string(t.test_suite_name()) + "." + t.name();
  }
  void send(const nlohmann::json& record) {
    // A failure message may quote bytes that are not UTF-8 (the student's output): replaced, not a
    // type_error that would end the test process.
    const std::string line =
        nonce_ + " " + record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fputs(line.c_str(), channel_);
    std::fflush(channel_);
  }
  FILE* channel_;
  std::string nonce_;
};

// The nonce arrives on fd 4 (the grader writes it and closes its end). Read here, in main, after
// static initialisation; a submission that reads it first leaves nothing to read, and its tests
// fail.
std::string read_nonce() {
  std::string nonce;
  char buffer[128];
  for (;;) {
    const ssize_t n = read(4, buffer, sizeof buffer);
    if (n <= 0) break;
    nonce.append(buffer, static_cast<std::size_t>(n));
    if (nonce.size() > 256) break;
  }
  close(4);
  while (!nonce.empty() && (nonce.back() == '\n' || nonce.back() == ' ')) nonce.pop_back();
  return nonce;
}

#if defined(WORKBOOK_GRADE_CUDA)
// GoogleTest's filter syntax, positive patterns only (the grader passes one test's full name).
bool selected(const std::string& filter, const std::string& test) {
  std::size_t from = 0;
  for (;;) {
    const std::size_t to = filter.find(':', from);
    if (workbook::grade::glob_match(std::string_view(filter).substr(from, to - from), test))
      return true;
    if (to == std::string::npos) return false;
    from = to + 1;
  }
}

// Without a GPU, every selected test is reported skipped ("no CUDA device: skipped (...)").
int skip_every_test(ChannelListener& channel, const std::string& why) {
  const std::string filter = GTEST_FLAG_GET(filter);
  const ::testing::UnitTest& all = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < all.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *all.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const std::string test = std::string(suite.name()) + "." + suite.GetTestInfo(j)->name();
      if (selected(filter, test)) channel.skipped(test, why);
    }
  }
  channel.finish(workbook::kSkipReturnCode);
  return workbook::kSkipReturnCode;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string nonce = read_nonce();
  FILE* channel = nonce.size() >= 32 ? fdopen(3, "w") : nullptr;
  if (channel == nullptr) {
    std::cerr
        << "This test executable is the autograder's: it reports on the grader's channel. Run "
           "your lab's tests with ctest instead.\n";
    return 3;
  }
  auto* listener = new ChannelListener(channel, nonce);
  ::testing::UnitTest::GetInstance()->listeners().Append(listener);
#if defined(WORKBOOK_GRADE_CUDA)
  try {
    workbook::cuda::require_device();
  } catch (const workbook::Skipped& e) {
    return skip_every_test(*listener, e.what());
  }
#endif
  const int code = RUN_ALL_TESTS();
  listener->finish(code);
  return code;
}
