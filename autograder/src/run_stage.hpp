#pragma once
// Run: a lab's visible tests (one sandboxed process per test, results on a private channel) and its
// hidden tests (the sealed checker, trusted, calls the student's worker in the sandbox). Each test
// judged sets its Item's status and output. Private to the grader.
#include <grade/prepare.hpp>
#include <grade/result.hpp>
#include <grade/rubric.hpp>
#include <grade/sandbox.hpp>

#include "workspace.hpp"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace workbook::grade {

/// One visible test running: its process and the channel it reports on.
struct TestRun {
  std::string test;
  std::unique_ptr<SandboxProcess> process;
  int channel = -1;
  std::string nonce, data;
  Clock::time_point start;
};

/// Reads what the test wrote to its channel (all of it when `until_eof`, else what is there now).
void read_channel(TestRun& t, bool until_eof);
/// A visible test's verdict, from its channel's records (tagged with the test's nonce) and how its
/// process ended.
void judge_visible(Item& item, const TestRun& t, const RunResult& r, const Context& c,
                   const LabRecipe& lab, const Rubric& rubric);
/// Runs the lab's visible tests (in parallel where the sandbox allows) and judges them. The tests
/// of a function whose hidden calls timed out (hidden_timeouts) are not run: they count 0 anyway
/// (its hidden tests gate them), and each would take the whole per-test timeout.
void run_visible(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items,
                 Clock::time_point lab_start);
/// The functions whose gating hidden tests failed on a call that did not return in time.
std::set<std::string> hidden_timeouts(const std::vector<Item>& items);
/// Runs the lab's hidden tests through its sealed checker and judges them (fail closed).
void run_hidden(Context& c, const LabRecipe& lab, const Rubric& rubric, std::vector<Item>& items,
                Clock::time_point lab_start);

}  // namespace workbook::grade
