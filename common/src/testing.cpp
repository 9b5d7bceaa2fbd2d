#include <workbook/internal/code_location.hpp>
#include <workbook/internal/compiler_warnings.hpp>
#include <workbook/internal/crash_report.hpp>
#include <workbook/internal/sanitized.hpp>
#include <workbook/internal/signal_safe_text.hpp>
#include <workbook/testing.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <future>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include <ucontext.h>
#include <unistd.h>

namespace workbook::testing {

Rng rng() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = test ? std::string(test->test_suite_name()) + "." + test->name() : "";
  return Rng(seed_for(name));
}

::testing::AssertionResult correct(const CheckResult& result) {
  if (result.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n" << result.report();
}

Specificity rank(const CheckResult& result) {
  if (result.ok) return Specificity::none;
  // A broad entry of the catalogue, fitted to the output, says no more than a pattern does.
  if (!result.mistake.empty()) return result.broad ? Specificity::pattern : Specificity::mistake;
  return std::max(result.specificity, Specificity::observed);
}

// --- Cases ---------------------------------------------------------------------------------------

namespace {

// "1..15, 17..31, 255": runs of consecutive sizes, at most `most` of them, then "...".
std::string ranges(const std::vector<std::size_t>& sizes, std::size_t most = 8) {
  std::string text;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < sizes.size();) {
    std::size_t j = i;
    while (j + 1 < sizes.size() && sizes[j + 1] == sizes[j] + 1) ++j;
    if (shown++ == most) return text + ", ...";
    text += (text.empty() ? "" : ", ") + std::to_string(sizes[i]);
    if (j > i) text += (j == i + 1 ? ", " : "..") + std::to_string(sizes[j]);
    i = j + 1;
  }
  return text;
}

// The largest power of two p (2 to 1024) that divides every nonzero size of `all` and none of
// `none`: the sizes that passed are multiples of the batch, say, and those that failed are not.
std::size_t common_multiple(const std::vector<std::size_t>& all,
                            const std::vector<std::size_t>& none) {
  std::size_t nonzero = 0;
  for (std::size_t n : all) nonzero += n != 0;
  if (nonzero < 2) return 0;
  for (std::size_t p = 1024; p >= 2; p /= 2) {
    const bool divides_all =
        std::all_of(all.begin(), all.end(), [p](std::size_t n) { return n % p == 0; });
    const bool divides_none =
        std::none_of(none.begin(), none.end(), [p](std::size_t n) { return n != 0 && n % p == 0; });
    if (divides_all && divides_none) return p;
  }
  return 0;
}

// The batch width w and the d of an unrolled loop over batches, when every failing size's count of
// whole batches (n / w) is not a multiple of d and every passing size's is: the batch left over
// from the unrolled loop (its own loop, or its own accumulator) is the wrong one. `after_a_pass`:
// only where the unrolled loop ran at least once (n / w > d) do the sizes with batches left over
// fail, the smaller ones pass. {0, 0} when none of these holds.
struct LeftOver {
  std::size_t w = 0, d = 0;
  bool after_a_pass = false;
};
LeftOver leftover_batches(const std::vector<std::size_t>& failing,
                          const std::vector<std::size_t>& passing) {
  if (failing.size() < 2 || passing.size() < 2) return {};
  std::vector<std::size_t> widths{simd_lanes<float>()};
  for (std::size_t w : {std::size_t{8}, std::size_t{4}})
    if (w < widths.front()) widths.push_back(w);
  for (bool after_a_pass : {false, true})
    for (std::size_t w : widths)
      for (std::size_t d : {std::size_t{2}, std::size_t{4}}) {
        const bool failing_left_over = std::all_of(
            failing.begin(), failing.end(),
            [&](std::size_t n) { return (n / w) % d != 0 && (!after_a_pass || n / w > d); });
        const bool passing_none = std::all_of(passing.begin(), passing.end(), [&](std::size_t n) {
          return (n / w) % d == 0 || (after_a_pass && n / w < d);
        });
        if (failing_left_over && passing_none) return {w, d, after_a_pass};
      }
  return {};
}

}  // namespace

Cases::Cases(Where where, std::string noun) : where_(std::move(where)), noun_(std::move(noun)) {
  publish();
}

namespace {
// The case a Cases was running when an exception ended its test, for the diagnosis of that
// exception (GoogleTest prints its text after the Cases is gone): "" when none.
std::string exception_case;
}  // namespace

Cases::~Cases() {
  internal::set_crash_case("", "", "", "");
  if (std::uncaught_exceptions() > exceptions_ && !cases_.empty())
    exception_case =
        "the case " + cases_.back().context + " of " + where_.function + " (" + where_.file + ")";
  if (reported_ || failures_.empty()) return;
  ADD_FAILURE() << (std::uncaught_exceptions() > exceptions_
                        ? "An exception ended the test in the case " + cases_.back().context +
                              ", after these failures:\n"
                        : std::string("\n"))
                << report();
}

void Cases::next(std::string context) {
  cases_.push_back({std::move(context), std::nullopt, false});
  publish();
}

void Cases::next_size(std::size_t n) {
  cases_.push_back({"n = " + std::to_string(n), n, false});
  publish();
}

bool Cases::check(const CheckResult& result) {
  const std::size_t ruled_out = ruled_out_.size();
  ruled_out_.insert(result.ruled_out.begin(), result.ruled_out.end());
  if (result.ok) {
    if (ruled_out_.size() != ruled_out && !failures_.empty()) resolve();
    return true;
  }
  if (cases_.empty()) next("the first case");
  cases_.back().failed = true;
  failures_.push_back({cases_.size() - 1, result, result});
  resolve();
  publish();
  return false;
}

namespace {

// A diagnosis's name up to the numbers in it, which name one case's sizes ("the batches after the
// last group of 4 (elements 64 to 111)" at n = 120, "... 128 to 175" at n = 180): which failures
// agree.
std::string kind_of(const std::string& key) {
  std::string k;
  for (const char c : key)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      k += c;
    else if (k.empty() || k.back() != '#')
      k += '#';
  return k;
}

std::string key_of(const CheckResult& r) {
  return r.diagnosis_key.empty() ? r.mistake : r.diagnosis_key;
}

}  // namespace

void Cases::resolve() {
  const auto match_kind = [](const CheckResult::Match& m) {
    return kind_of(m.diagnosis_key.empty() ? m.mistake : m.diagnosis_key);
  };
  std::map<std::string, std::size_t> support;  // failures whose output matches each kind
  for (const Failure& f : failures_) {
    std::set<std::string> kinds{kind_of(key_of(f.as_checked))};
    for (const CheckResult::Match& m : f.as_checked.other_matches) kinds.insert(match_kind(m));
    for (const std::string& k : kinds) ++support[k];
  }
  for (Failure& f : failures_) {
    f.result = f.as_checked;
    // A match that some case rules out gives way to any other that none does.
    const bool first_ruled_out = ruled_out_.count(key_of(f.as_checked)) > 0;
    std::size_t most = first_ruled_out ? 0 : support[kind_of(key_of(f.as_checked))];
    for (const CheckResult::Match& m : f.as_checked.other_matches) {
      // A broad entry ("rows normalized with statistics other than their own", fitted to the
      // output) matches wherever anything of its kind is wrong: it never displaces a narrower one.
      if (m.broad || ruled_out_.count(m.diagnosis_key) || support[match_kind(m)] <= most) continue;
      most = support[match_kind(m)];
      f.result.mistake = m.mistake;
      f.result.diagnosis_key = m.diagnosis_key;
      f.result.diagnosis = m.diagnosis;
      f.result.broad = false;
      // A generic fit (no catalogue entry) tells a pattern, not the student's mistake.
      if (m.mistake.empty()) f.result.specificity = Specificity::pattern;
    }
  }
}

Cases::Telling Cases::most_telling() const {
  // A catalogue mistake that only one case names, while at least two other cases say something
  // else that is telling, is a coincidence of that case's size (a loop that stops one batch early
  // looks, at n = 32 alone, like one that steps by 32): it counts as a pattern, no more. A
  // reduction's diagnosis that few failing cases agree on is a coincidence too (see weight). (A
  // whole output that one case alone matches is not: other cases may only show what it read, NaN.)
  // What the weights need of every failure, counted once (publish() asks after every case).
  const auto kind = [](const CheckResult& r) { return kind_of(key_of(r)); };
  std::map<std::string, std::size_t> same, telling_same;  // failures per kind, and telling ones
  std::size_t telling_all = 0;
  for (const Failure& g : failures_) {
    const std::string k = kind(g.result);
    ++same[k];
    if (rank(g.result) >= Specificity::pattern) {
      ++telling_all;
      ++telling_same[k];
    }
  }
  const auto weight = [&](const Failure& f) {
    const Specificity r = rank(f.result);
    const std::string k = kind(f.result);
    // A reduction's diagnosis rests on one number falling within a bound: one that a single case,
    // or fewer than a quarter, of four or more failing cases agree on is a coincidence of their
    // sizes ("accumulator 1 of 8 left out" fits n = 186 alone, while every size from 32 on
    // fails): what was observed.
    const std::size_t alike = same[k];
    if (r >= Specificity::pattern && !k.empty() && f.result.checked <= 1 && failures_.size() >= 4 &&
        (alike == 1 || alike * 4 < failures_.size()))
      return Specificity::observed;
    // The same for a catalogue match on a tiny output (3 x 2) that no other failing case shares:
    // with so few numbers, another mistake can give the same ones.
    if (r == Specificity::mistake && f.result.checked <= 9 && alike == 1 && failures_.size() >= 4)
      return Specificity::observed;
    if (r != Specificity::mistake) return r;
    // Had the student made this mistake, a case where it gives the right answer would have
    // passed, and one where it gives a wrong one would have failed: either rules it out (at n = 1,
    // rows left unwritten read like a row loop bounded by n, but the cases where n >= m fail too).
    if (ruled_out_.count(key_of(f.result))) return Specificity::observed;
    if (alike == 1 && telling_all - telling_same[k] >= 2) return Specificity::pattern;
    return r;
  };
  // A demoted match still reads "your output matches ...": among equals, one that is not wins.
  const Failure* best = nullptr;
  Specificity best_weight{};
  bool best_demoted = false;
  for (const Failure& f : failures_) {
    const Specificity w = weight(f);
    const bool demoted = w != rank(f.result);
    // Later wins ties: the loops run from small cases to large ones.
    if (!best || w > best_weight || (w == best_weight && best_demoted && !demoted) ||
        (w == best_weight && demoted == best_demoted && f.result.checked >= best->result.checked)) {
      best = &f;
      best_weight = w;
      best_demoted = demoted;
    }
  }
  return {best, best_weight};
}

std::string Cases::summary() const {
  std::size_t failed = 0;
  bool all_sizes = true;
  std::vector<std::size_t> failing, passing;
  std::vector<std::string> failing_contexts;
  for (const Case& c : cases_) {
    failed += c.failed;
    all_sizes = all_sizes && c.size.has_value();
    if (c.failed) failing_contexts.push_back(c.context);
    if (c.size) (c.failed ? failing : passing).push_back(*c.size);
  }
  const std::string plural = noun_ + (cases_.size() == 1 ? "" : "s");
  std::string text = "Failed at " + std::to_string(failed) + " of " +
                     std::to_string(cases_.size()) + " " + plural + ": ";
  if (all_sizes) {
    text += "n = " + ranges(failing);
    if (!passing.empty()) text += "; passed at n = " + ranges(passing);
    return text + ".";
  }
  for (std::size_t i = 0; i < failing_contexts.size() && i < 4; ++i)
    text += (i ? "; " : "") + failing_contexts[i];
  if (failing_contexts.size() > 4)
    text += "; and " + std::to_string(failing_contexts.size() - 4) + " more";
  return text + ".";
}

std::string Cases::separation() const {
  bool all_sizes = true;
  std::vector<std::size_t> failing, passing;
  for (const Case& c : cases_) {
    all_sizes = all_sizes && c.size.has_value();
    if (c.size) (c.failed ? failing : passing).push_back(*c.size);
  }
  if (!all_sizes) {
    const std::string threshold = threshold_of_failures();
    return threshold.empty() ? phrase_of_failures() : threshold;
  }
  if (const std::size_t p = common_multiple(passing, failing))
    return "Every size that passed is a multiple of " + std::to_string(p) +
           ", and none that failed.";
  if (const std::size_t q = common_multiple(failing, passing))
    return "Every size that failed is a multiple of " + std::to_string(q) +
           ", and none that passed.";
  if (const LeftOver l =
          where_.model == Model::simd ? leftover_batches(failing, passing) : LeftOver{};
      l.w > 0) {
    const std::string w = std::to_string(l.w), d = std::to_string(l.d);
    return "Every size that failed has a number of whole batches of " + w + " (n / " + w +
           ") that is not a multiple of " + d +
           (l.after_a_pass ? " and is more than " + d : std::string()) +
           ", and every size that passed has " +
           (l.after_a_pass ? "a multiple of " + d + ", or fewer than " + d : "a multiple of " + d) +
           ": a loop that takes " + d +
           " batches at a time is right, and what handles the batches left over after it (their "
           "own loop, or the accumulator they go into) is wrong.";
  }
  if (const std::size_t from =
          failing.empty() ? 0 : *std::min_element(failing.begin(), failing.end());
      passing.size() >= 2 && failing.size() >= 2 &&
      *std::max_element(passing.begin(), passing.end()) < from)
    return "Every size from " + std::to_string(from) +
           " on failed, and every smaller one passed: look at what your code does first at n = " +
           std::to_string(from) +
           " (a loop that starts to run at that size: a step of several batches at a time, a "
           "second block).";
  return "";
}

std::string Cases::phrase_of_failures() const {
  // The contexts' phrases ("64 x 48 x 100, A per row, B per tensor" has three), those without a
  // number: where exactly one is in every failing case and in no passing one, it names what the
  // failing cases have in common ("B per tensor", "after a second call on the same C").
  static const std::regex separators(R"((, |; |: ))");
  std::map<std::string, std::pair<std::size_t, std::size_t>> in;  // phrase: failing, passing cases
  std::size_t failed = 0;
  for (const Case& c : cases_) {
    failed += c.failed;
    std::set<std::string> phrases;
    for (auto it = std::sregex_token_iterator(c.context.begin(), c.context.end(), separators, -1);
         it != std::sregex_token_iterator(); ++it) {
      const std::string phrase = *it;
      if (!phrase.empty() && std::none_of(phrase.begin(), phrase.end(), [](char ch) {
            return std::isdigit(static_cast<unsigned char>(ch));
          }))
        phrases.insert(phrase);
    }
    for (const std::string& phrase : phrases) (c.failed ? in[phrase].first : in[phrase].second)++;
  }
  // One failing case and one passing one are enough: a phrase is what the case is ("per tensor"
  // against "per row"), not a value that may separate them by chance.
  if (failed < 1 || cases_.size() - failed < 1) return "";
  std::vector<std::string> found;
  for (const auto& [phrase, counts] : in)
    if (counts.first == failed && counts.second == 0) found.push_back(phrase);
  if (found.size() != 1) return "";
  return "Every " + noun_ + " with \"" + found.front() + "\" failed (" + std::to_string(failed) +
         " of " + std::to_string(cases_.size()) +
         "), and every one without it passed: look at "
         "what your code does differently there.";
}

std::string Cases::threshold_of_failures() const {
  // The "name = number" pairs of each case's context ("m = 7, n = 13, k = 300"): where one name
  // separates the cases, every failing case above a value and every passing one at or below it
  // (or the reverse), that is the case's most telling fact ("wrong once k passes 256").
  static const std::regex pair(R"(\b([A-Za-z_][A-Za-z_0-9]*) = ([0-9]+)\b)");
  std::map<std::string, std::vector<std::pair<std::size_t, bool>>> values;
  std::size_t failed = 0;
  for (const Case& c : cases_) {
    failed += c.failed;
    std::map<std::string, std::size_t> seen;
    for (auto m = std::sregex_iterator(c.context.begin(), c.context.end(), pair);
         m != std::sregex_iterator(); ++m)
      seen.emplace((*m)[1].str(), std::stoull((*m)[2].str()));
    for (const auto& [name, v] : seen) values[name].push_back({v, c.failed});
  }
  // Two failures and two passes at least, and one name alone that separates them: where the
  // failing cases differ from the passing ones in several parameters at once, none is the cause.
  if (failed < 2 || cases_.size() - failed < 2) return "";
  std::vector<std::string> found;
  for (const auto& [name, list] : values) {
    if (list.size() != cases_.size()) continue;  // not in every case
    std::size_t max_pass = 0, min_fail = SIZE_MAX, max_fail = 0, min_pass = SIZE_MAX;
    for (const auto& [v, f] : list) {
      if (f)
        min_fail = std::min(min_fail, v), max_fail = std::max(max_fail, v);
      else
        max_pass = std::max(max_pass, v), min_pass = std::min(min_pass, v);
    }
    if (max_pass < min_fail)
      found.push_back("Every " + noun_ + " with " + name + " > " + std::to_string(max_pass) +
                      " failed, and every one with " + name + " <= " + std::to_string(max_pass) +
                      " passed: look at what your code does differently once " + name + " passes " +
                      std::to_string(max_pass) +
                      " (a second block of it, a loop "
                      "bound, a tail).");
    else if (max_fail < min_pass)
      found.push_back("Every " + noun_ + " with " + name + " < " + std::to_string(min_pass) +
                      " failed, and every one with " + name + " >= " + std::to_string(min_pass) +
                      " passed: look at what your code does when " + name + " is that small.");
  }
  if (found.size() == 1) return found.front();
  if (!found.empty()) return "";
  // Two sizes equal in every passing case and different in every failing one: one is used for the
  // other (a structured binding in another order, arguments swapped). Names whose values are the
  // same in every case (n and ldb of packed matrices) count as one, named by the shortest.
  std::vector<std::pair<std::string, const std::vector<std::pair<std::size_t, bool>>*>> groups;
  for (const auto& [name, list] : values) {
    if (list.size() != cases_.size()) continue;
    auto same = std::find_if(groups.begin(), groups.end(),
                             [&](const auto& g) { return *g.second == list; });
    if (same == groups.end())
      groups.push_back({name, &list});
    else if (name.size() < same->first.size())
      same->first = name;
  }
  std::vector<std::string> swapped;
  for (std::size_t x = 0; x < groups.size(); ++x)
    for (std::size_t y = x + 1; y < groups.size(); ++y) {
      const auto& a = *groups[x].second;
      const auto& b = *groups[y].second;
      bool separates = true;
      for (std::size_t c = 0; c < a.size() && separates; ++c)
        separates = (a[c].first == b[c].first) != a[c].second;
      const std::string& p = groups[x].first;
      const std::string& q = groups[y].first;
      if (separates)
        swapped.push_back("Every " + noun_ + " that passed has " + p + " = " + q +
                          ", and every one that failed has " + p + " != " + q +
                          ": your code uses one of them where the other is meant (two names "
                          "swapped: the order of a structured binding, of a call's arguments, of "
                          "two loop bounds).");
    }
  if (swapped.size() == 1) return swapped.front();
  // Otherwise a parity: every failing case odd in one name, and cases even in it passed (a loop
  // that takes two steps at a time, whose last, odd, step is wrong). Odd passing cases may exist:
  // the odd step may matter only at some sizes.
  std::vector<std::string> parity;
  for (const auto& [name, list] : values) {
    if (list.size() != cases_.size()) continue;
    std::size_t odd_fails = 0, even_passes = 0, fails = 0;
    for (const auto& [v, f] : list) {
      fails += f;
      odd_fails += f && v % 2 == 1;
      even_passes += !f && v % 2 == 0;
    }
    if (odd_fails == fails && even_passes >= 2)
      parity.push_back("Every " + noun_ + " that failed has an odd " + name + ", and " + noun_ +
                       "s with an even " + name + " passed: look at a loop over " + name +
                       " that takes two steps at a time (unrolled by 2, or pairs of elements), "
                       "at its last, odd, step.");
  }
  return parity.size() == 1 ? parity.front() : "";
}

std::string Cases::report() const {
  reported_ = true;
  const Failure* best = most_telling().failure;
  if (!best) return "";
  std::string text = best->result.report();
  // The case, right under the result's first line (its summary).
  std::string the_case = "  Case: " + cases_[best->case_index].context;
  if (cases_.size() > 1) {
    std::size_t failed = 0;
    for (const Case& c : cases_) failed += c.failed;
    if (failed > 1)
      the_case += " (of the " + std::to_string(failed) + " " + noun_ +
                  "s that failed, the one whose diagnosis says most; all are listed below)";
  }
  // What separates the failing cases from the passing ones, when one thing does: the first fact
  // to read after the case, whatever the case's own diagnosis says.
  if (const std::string apart = separation(); !apart.empty())
    the_case += "\n  Across the " + noun_ + "s: " + apart;
  const std::size_t eol = text.find('\n');
  text.insert(eol == std::string::npos ? text.size() : eol + 1, the_case + "\n");
  if (cases_.size() > 1) text += "  " + summary() + "\n";
  return text;
}

::testing::AssertionResult Cases::verdict() const {
  if (passed()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n" << report();
}

void Cases::publish() const {
  std::string earlier;
  const auto [best, weight] = most_telling();
  if (best) {
    std::size_t failed = 0;
    for (const Case& c : cases_) failed += c.failed;
    earlier = std::to_string(failed) + " of the " + std::to_string(cases_.size()) + " " + noun_ +
              "s run so far failed; the most telling (" + cases_[best->case_index].context +
              "): " + best->result.summary + ". Diagnosis: " + best->result.diagnosis;
    if (const std::string apart = separation(); !apart.empty())
      earlier += " Across the " + noun_ + "s so far: " + apart;
  }
  internal::set_crash_case(where_.function.c_str(), where_.file.c_str(),
                           cases_.empty() ? "" : cases_.back().context.c_str(), earlier.c_str(),
                           best && weight >= Specificity::pattern);
}

// --- The crash report ----------------------------------------------------------------------------

namespace internal {
namespace {

const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV (segmentation fault)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic exception)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (the program aborted)";
    default:
      return "a fatal signal";
  }
}

// Where `address` lies against one buffer: writes it and returns true when it lies within `near`
// bytes of it.
bool place(Text& t, const LiveBuffer& b, std::uintptr_t address, std::size_t near) {
  const std::uintptr_t first = b.begin + b.front, end = first + b.bytes;
  const std::uintptr_t guard_end = end + b.back;
  auto describe = [&] {
    t << "the " << b.name << " (" << (b.element_size ? b.bytes / b.element_size : 0) << " "
      << b.type << ")";
  };
  if (address >= end) {
    const std::size_t past = address - end;
    if (past >= near + b.back) return false;
    t << past << " bytes past the end of ";
    describe();
    t << (address < guard_end ? ", inside its guard zone" : ", beyond its guard zone");
    return true;
  }
  if (address < first) {
    const std::size_t before = first - address;
    if (before >= near + b.front) return false;
    t << before << " bytes before the first element of ";
    describe();
    t << (address >= b.begin ? ", inside its guard zone" : ", beyond its guard zone");
    return true;
  }
  t << "inside ";
  describe();
  t << ", at element " << (address - first) / (b.element_size ? b.element_size : 1);
  return true;
}

// The alignment of each live buffer's first element: what an aligned load or store needs.
void alignments(Text& t, const CrashFacts& f) {
  if (f.buffer_count == 0) return;
  t << "  The test's buffers:";
  for (std::size_t i = 0; i < f.buffer_count; ++i) {
    const LiveBuffer& b = f.buffers[i];
    const std::size_t offset = (b.begin + b.front) % f.simd_bytes;
    t << (i ? ";" : "") << " the " << b.name << " ("
      << (b.element_size ? b.bytes / b.element_size : 0) << " " << b.type << ") starts ";
    if (offset == 0)
      t << "on a " << f.simd_bytes << "-byte boundary";
    else
      t << offset << " bytes past a " << f.simd_bytes << "-byte boundary";
  }
  t << ".\n";
}

// Is the case "n = 0" (Cases::next_size(0), or a context that starts with it)?
bool empty_case(const char* context) {
  return context && std::strncmp(context, "n = 0", 5) == 0 &&
         (context[5] == '\0' || context[5] == ',');
}

// Whether the statement shown where it crashed (the source lines of the crash's own frame in
// `location`, before any "called from") hands a whole range to something that needs an element
// (max, min, front, back) and holds no loop of its own. Signal-safe.
bool crash_line_needs_an_element(const char* location) {
  if (location == nullptr || std::strstr(location, " | ") == nullptr) return false;
  const char* end = std::strstr(location, "called from");
  const auto shown = [&](const char* word) {
    const char* at = std::strstr(location, word);
    return at != nullptr && (end == nullptr || at < end);
  };
  for (const char* loop : {"for (", "for(", "while (", "while(", "do {"})
    if (shown(loop)) return false;
  // (std::max(a, b) of two elements is no such call: a loop's body may hold it.)
  for (const char* call : {"ranges::max(", "ranges::min(", "max_element", "min_element", "minmax",
                           "front()", "back()", "[0]"})
    if (shown(call)) return true;
  return false;
}

void explain_segv(Text& t, const CrashFacts& f) {
  // x86 reports a general-protection fault (an aligned access to an unaligned address, or a
  // non-canonical pointer) as SI_KERNEL with no address.
  if (f.code == SI_KERNEL && f.address == 0) {
    t << "  The processor gives no address (a general-protection fault). In a SIMD loop this is "
         "most often an aligned load or store (load_aligned / store_aligned, "
         "_mm256_load_ps / _mm512_store_ps, ...) on an address that is not a multiple of the "
         "register width, "
      << f.simd_bytes
      << " bytes here: use load_unaligned / store_unaligned, or handle elements one by one until "
         "the address is aligned. Otherwise, a pointer that holds garbage.\n";
    alignments(t, f);
    return;
  }
  t << "  The fault address is "
    << "";
  t.hex(f.address);
  if (f.address < 65536) {
    t << ", near 0: a null pointer was read or written (an empty span's data(), or a pointer "
         "never set), at an offset of "
      << static_cast<std::size_t>(f.address) << " bytes.\n";
    if (empty_case(f.case_context) && crash_line_needs_an_element(f.location))
      t << "  The case is n = 0, whose spans are empty (data() may be null), and the line that "
           "crashed, with no loop of its own, gives the empty range to something that needs an "
           "element (std::ranges::max or min, *std::max_element, front(), back() or [0] of an "
           "empty range read an element that is not there). Handle n = 0 before it: the handout "
           "says what an empty input gives.\n";
    else if (empty_case(f.case_context))
      t << "  The case is n = 0, whose spans are empty (data() may be null): nothing may be read "
           "or written, so a loop ran that must not. Its bound lets it run at n = 0: i <= n, or "
           "i <= n - k / i < n - k with an unsigned n, where n - k wraps around to a huge number "
           "when n < k. Write bounds as i < n and i + k <= n.\n";
    return;
  }
  if (f.stack != 0 && f.address < f.stack + 4096 && f.stack - f.address < (std::size_t{1} << 20)) {
    t << ", just below the stack pointer: the stack overflowed (a recursion that never ends, or a "
         "large array on the stack).\n";
    return;
  }
  // The buffer it is in or next to, with a margin that grows until one is found: at most the
  // buffer's own size beyond it (a loop that overruns a buffer of 20 floats does not land 45 KB
  // away; a buffer of the student's own more likely lies there).
  for (std::size_t tier : {std::size_t{0}, std::size_t{4096}, std::size_t{1} << 20}) {
    for (std::size_t i = 0; i < f.buffer_count; ++i) {
      const std::size_t near =
          tier > 4096 ? std::min(tier, std::max<std::size_t>(4096, 2 * f.buffers[i].bytes)) : tier;
      Text probe(nullptr, 0);  // a dry run: does this buffer hold the address within `near`?
      if (!place(probe, f.buffers[i], f.address, near)) continue;
      t << ": ";
      place(t, f.buffers[i], f.address, near);
      const LiveBuffer& b = f.buffers[i];
      const bool past = f.address >= b.begin + b.front + b.bytes;
      const bool inside = !past && f.address >= b.begin + b.front;
      if (past)
        t << ". That is a read or write past the end: the loop runs past n (a bound like i <= n, "
             "or whole SIMD batches with no tail, or a second index that is never reset).\n";
      else if (inside)
        t << ". The memory is there, so the access itself is refused: an aligned access, or a "
             "write to memory that is read-only.\n";
      else
        t << ". That is an access before the start: an index that went below 0 (an unsigned one "
             "wraps to a huge value) or a start shifted back.\n";
      return;
    }
  }
  t << ", in or near none of the test's buffers: a pointer that holds garbage, an index far "
       "out of range (an unsigned index that went below 0 wraps to a huge value), or a buffer of "
       "your own (a packing buffer, a std::vector you allocate) indexed past its end. It may also "
       "be an input (inputs are not tracked).\n";
}

void explain(Text& t, const CrashFacts& f) {
  switch (f.signal) {
    case SIGABRT:
      t << "  The C library or the C++ runtime stopped the program; the line just above this "
           "report says why. A message of malloc or free ('malloc(): corrupted top size', "
           "'free(): invalid pointer', 'double free or corruption', a 'malloc assertion') means "
           "that something wrote past the end (or before the start) of a block of heap memory "
           "before it: a buffer you allocate yourself (a packing buffer, a std::vector sized too "
           "small for what you store in it), or one of the test's; or a block was freed twice. "
           "'Assertion ... failed' is an assert() that did not hold.\n";
      return;
    case SIGSEGV:
      explain_segv(t, f);
      return;
    case SIGBUS:
      if (f.code == BUS_ADRALN) {
        t << "  A misaligned access at ";
        t.hex(f.address);
        t << ": an aligned load or store on an address that is not a multiple of its width.\n";
        alignments(t, f);
      } else {
        explain_segv(t, f);
      }
      return;
    case SIGFPE:
      if (f.code == FPE_INTDIV)
        t << "  An integer division (or %) by zero: a count that can be 0 (the number of "
             "batches, chunks or threads when n is small) used as a divisor.\n";
      else if (f.code == FPE_INTOVF)
        t << "  An integer overflow in a division (INT_MIN / -1).\n";
      else
        t << "  A floating-point exception: a trap on floating-point errors was switched on.\n";
      return;
    case SIGILL:
      t << "  The processor met an instruction it cannot run: an instruction set this CPU lacks "
           "(code built with -march=native elsewhere, or an AVX-512 intrinsic on a CPU without "
           "AVX-512), a __builtin_trap(), or a jump into garbage (a return address overwritten by "
           "a write past the end of a local array).\n";
      return;
    default:
      return;
  }
}

}  // namespace

std::size_t format_crash_report(const CrashFacts& f, char* out, std::size_t capacity) {
  Text t(out, capacity);
  t << "\n*** CRASH: " << signal_name(f.signal);
  if (*f.test) t << " in test " << f.test;
  t << "\n";
  if (*f.function) {
    t << "  While running " << f.function;
    if (*f.case_context) t << ", case: " << f.case_context;
    t << "\n";
  } else if (*f.case_context) {
    t << "  In the case: " << f.case_context << "\n";
  }
  t << f.location;
  if (*f.earlier && f.earlier_names_a_cause) {
    t << "  Before the crash, " << f.earlier << "\n";
    t << "  What the crash itself shows:\n";
    explain(t, f);
  } else {
    explain(t, f);
    if (*f.earlier) t << "  Before the crash, " << f.earlier << "\n";
  }
  t << f.warnings;
  if (*f.race_command)
    t << "  In a lab of threads a data race crashes this way too: `" << f.race_command
      << "` runs these tests under ThreadSanitizer, which names the two lines that race.\n";
  t << "  Next: ";
  if (*f.file)
    t << "edit " << f.file << (*f.function ? ": " : "") << f.function << ". ";
  else if (*f.lab_folder)
    t << "edit your code in " << f.lab_folder << "/ (the function this test calls). ";
  const char* lab = *f.lab ? f.lab : "labNN";
  if (*f.location)
    t << "Start from the line above. Where it does not show why, AddressSanitizer (and "
         "UndefinedBehaviorSanitizer, which names a misaligned access) names the access and the "
         "buffer it missed; build your code with them and run this test there:\n";
  else
    t << "To find the line, build your code with AddressSanitizer (and UndefinedBehaviorSanitizer, "
         "which names a misaligned access) and run this test there; the first frame of the stack "
         "in your file is the line:\n";
  t << "    cmake --preset " << lab << " -B build/" << lab
    << "-asan -DWORKBOOK_SANITIZER=address -DCMAKE_BUILD_TYPE=RelWithDebInfo\n"
    << "    cmake --build build/" << lab << "-asan\n"
    << "    UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/" << lab << "-asan -R '" << lab
    << "." << f.test << "' --output-on-failure\n";
  return t.finish();
}

namespace {

// The handler's state: fixed buffers written between tests and cases, read when a signal comes.
struct CrashState {
  char test[256] = "";
  char function[128] = "";
  char file[256] = "";
  char case_context[512] = "";
  char earlier[2048] = "";
  bool earlier_names_a_cause = false;
  char lab[16] = "";
  char lab_folder[256] = "";
  char report[16384] = "";
  char location[1024] = "";
  char warnings[2048] = "";
  char race_command[256] = "";
  LiveBuffer buffers[detail::kLiveSlots];
};
CrashState crash_state;

void copy(char* to, std::size_t capacity, const char* from) {
  std::snprintf(to, capacity, "%s", from ? from : "");
}

// "labs/01_vectorized_relu" and "lab01" from the executable's path (a lab's build folder has the
// lab's folder name), so that a crash outside a Cases still names the lab.
void find_lab(const char* argv0) {
  char path[4096] = "";
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  std::string exe = length > 0 ? std::string(path, static_cast<std::size_t>(length))
                               : std::string(argv0 ? argv0 : "");
  const std::size_t at = exe.rfind("/labs/");
  if (at == std::string::npos) return;
  const std::string rest = exe.substr(at + 6);
  const std::string folder = rest.substr(0, rest.find('/'));
  if (folder.size() < 3 || !std::isdigit(static_cast<unsigned char>(folder[0])) ||
      !std::isdigit(static_cast<unsigned char>(folder[1])) || folder[2] != '_')
    return;
  copy(crash_state.lab_folder, sizeof crash_state.lab_folder, ("labs/" + folder).c_str());
  copy(crash_state.lab, sizeof crash_state.lab, ("lab" + folder.substr(0, 2)).c_str());
}

void on_crash(int signal, siginfo_t* info, void* context) {
  CrashState& s = crash_state;
  CrashFacts f;
  f.signal = signal;
  f.code = info ? info->si_code : 0;
  f.address = info ? reinterpret_cast<std::uintptr_t>(info->si_addr) : 0;
#if defined(__x86_64__)
  if (context) {
    const mcontext_t& registers = static_cast<ucontext_t*>(context)->uc_mcontext;
    f.stack = static_cast<std::uintptr_t>(registers.gregs[REG_RSP]);
    describe_code_location(stack_at_fault(static_cast<std::uintptr_t>(registers.gregs[REG_RIP])),
                           signal == SIGABRT ? "was stopped" : "crashed", s.location,
                           sizeof s.location);
  }
#else
  (void)context;
#endif
  f.location = s.location;
  f.warnings = s.warnings;
  f.race_command = s.race_command;
  f.test = s.test;
  f.function = s.function;
  f.file = s.file;
  f.case_context = s.case_context;
  f.earlier = s.earlier;
  f.earlier_names_a_cause = s.earlier_names_a_cause;
  f.lab = s.lab;
  f.lab_folder = s.lab_folder;
  f.buffer_count = live_buffers(s.buffers, detail::kLiveSlots);
  f.buffers = s.buffers;
  f.simd_bytes = simd_lanes<float>() * sizeof(float);
  const std::size_t length = format_crash_report(f, s.report, sizeof s.report);
  for (std::size_t done = 0; done < length;) {
    const ssize_t wrote = write(STDERR_FILENO, s.report + done, length - done);
    if (wrote <= 0) break;
    done += static_cast<std::size_t>(wrote);
  }
  _exit(kCrashExitCode);
}

alignas(64) char alternate_stack[1 << 16];
bool installed = false;

}  // namespace

bool crash_report_installed() {
  return installed;
}

// std::terminate: an exception that left a thread or a noexcept function, or a std::thread
// destroyed while joinable. Says which, in the test and case running, then exits as a crash does.
[[noreturn]] void on_terminate() {
  static std::atomic<bool> entered{false};
  if (entered.exchange(true)) {
    // Another thread is writing the report (two workers often fail alike): let it finish; it
    // ends the process.
    std::this_thread::sleep_for(std::chrono::seconds(5));
  } else {
    std::string what, advice;
    if (const std::exception_ptr e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::future_error& x) {
        what = x.what();  // "std::future_error: No associated state"
        advice =
            "A future, promise or packaged_task was used twice, or after it was moved from: take "
            "each task from the queue once (pop it as you take it, under the same lock: a task "
            "moved out under the lock and popped after it lets another worker take the same, "
            "empty, task), run it once, and call each future's get() once.";
      } catch (const std::system_error& x) {
        what = std::string("std::system_error: ") + x.what();
        if (x.code() == std::errc::operation_not_permitted)
          advice =
              "A lock was used while it does not hold its mutex: a std::unique_lock unlocked "
              "twice, or unlocked (to run a task outside it) and not locked again before the "
              "next wait or unlock; a condition_variable's wait needs its lock held. Lock it "
              "again after the task (or make the lock a local of each pass of the loop).";
        else if (x.code() == std::errc::resource_deadlock_would_occur)
          advice =
              "A thread would wait for itself: a std::thread joined from its own thread (a pool "
              "destroyed by one of its own workers, in a task), or a lock locked twice by one "
              "thread.";
        else if (x.code() == std::errc::invalid_argument)
          advice =
              "A std::thread joined (or detached) that cannot be: never started, moved from, or "
              "joined already.";
        else
          advice =
              "A thread or mutex was used wrongly: a std::thread joined twice (or never "
              "started), a mutex unlocked by a thread that does not hold it, or locked twice by "
              "one thread.";
      } catch (const std::exception& x) {
        what = std::string("an exception: ") + x.what();
        advice =
            "An exception thrown in a thread of your own (a worker running a task outside its "
            "packaged_task) or out of a noexcept function ends the program: catch it where it is "
            "thrown and hand it over (a packaged_task's future carries it to get()).";
      } catch (...) {
        what = "an exception that is not a std::exception";
        advice = "Catch it in the thread that throws it, and hand it over to the caller.";
      }
    } else {
      what = "no exception";
      advice =
          "std::terminate without an exception is usually a std::thread destroyed while it can "
          "still be joined: join every thread before it goes (a pool's destructor included), or "
          "use std::jthread, which joins in its destructor.";
    }
    // Where: the line that threw the exception, or the one that ended the program without one
    // (a joinable std::thread's destructor).
    char running[3072], edit[512], location[1024] = "";
    format_running(running, sizeof running);
    format_edit(edit, sizeof edit);
    if (std::current_exception())
      describe_code_location(last_throw(), "threw", location, sizeof location, nullptr,
                             what.c_str());
    else
      describe_code_location(capture_stack(0), "ended", location, sizeof location);
    std::string race;
    if (*crash_state.race_command)
      race = std::string(
                 "  A data race on the pool's state (a queue changed outside its mutex, a "
                 "task taken by two workers) ends this way too: `") +
             crash_state.race_command +
             "` runs these tests under ThreadSanitizer, which names the two lines that race.\n";
    std::fprintf(
        stderr, "\n*** TERMINATE: std::terminate was called (%s).\n%s%s  %s\n%s%s  Next: %s\n",
        what.c_str(), running, location, advice.c_str(), race.c_str(), crash_state.warnings, edit);
    std::fflush(stderr);
  }
  std::_Exit(kCrashExitCode);  // as the crash report does: a failure with its report
}

void install_crash_report(const char* argv0) {
  installed = true;
  std::set_terminate(on_terminate);
  find_lab(argv0);
  prepare_code_location();
  copy(crash_state.warnings, sizeof crash_state.warnings, compiler_warnings_report().c_str());
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof alternate_stack;
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_sigaction = on_crash;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(signal, &action, nullptr);
}

std::size_t format_running(char* out, std::size_t capacity) {
  const CrashState& s = crash_state;
  Text t(out, capacity);
  if (*s.test) t << "  In test " << s.test << "\n";
  if (*s.function) {
    t << "  While running " << s.function;
    if (*s.case_context) t << ", case: " << s.case_context;
    t << "\n";
  }
  if (*s.earlier) t << "  Before this case, " << s.earlier << "\n";
  return t.finish();
}

std::size_t format_edit(char* out, std::size_t capacity) {
  const CrashState& s = crash_state;
  Text t(out, capacity);
  if (*s.file)
    t << "edit " << s.file;
  else if (*s.lab_folder)
    t << "edit your code in " << s.lab_folder;
  else
    t << "edit your code";
  return t.finish();
}

void set_crash_test(const char* test) {
  copy(crash_state.test, sizeof crash_state.test, test);
}

void set_race_command(const char* command) {
  copy(crash_state.race_command, sizeof crash_state.race_command, command);
}

void set_crash_case(const char* function, const char* file, const char* case_context,
                    const char* earlier, bool earlier_names_a_cause) {
  copy(crash_state.function, sizeof crash_state.function, function);
  copy(crash_state.file, sizeof crash_state.file, file);
  copy(crash_state.case_context, sizeof crash_state.case_context, case_context);
  copy(crash_state.earlier, sizeof crash_state.earlier, earlier);
  crash_state.earlier_names_a_cause = earlier_names_a_cause;
}

}  // namespace internal

// --- main() --------------------------------------------------------------------------------------

namespace {

class PrintSeedOnFailure : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& test) override {
    internal::set_crash_test((std::string(test.test_suite_name()) + "." + test.name()).c_str());
    internal::clear_last_throw();
  }
  // An exception that left the test body: GoogleTest says only that it was thrown.
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    const std::string_view message = result.message() ? result.message() : "";
    // (A stub's NotImplemented says what to do itself.)
    if (!result.failed() || message.find("thrown in the test body") == std::string_view::npos ||
        message.find("not implemented yet") != std::string_view::npos)
      return;
    // Where it was thrown: the student's own line, or a library function that line called.
    char location[1024];
    const internal::Stack thrown = internal::last_throw();
    // (GoogleTest's text: C++ exception with description "..." thrown in the test body.)
    std::string what;
    if (const std::size_t from = message.find("description \""); from != std::string_view::npos)
      what = message.substr(from + 13, message.rfind("\" thrown") - from - 13);
    bool own_line = false;
    const bool located =
        internal::describe_code_location(thrown, "threw", location, sizeof location, &own_line,
                                         what.c_str()) > 0;
    if (located) std::cout << location;
    const std::string in_case = exception_case.empty() ? "" : ", in " + exception_case;
    // An index checked by .at() (libstdc++'s text: "vector::_M_range_check: __n (which is 3206)
    // >= this->size() (which is 3093)"): the code indexed past the end; the text has both.
    if (message.find("_M_range_check") != std::string_view::npos ||
        message.find("out of range") != std::string_view::npos) {
      std::cout << "  Diagnosis: the code under test indexed past the end of an array that checks "
                   "its index (.at(): the exception's text above gives the index and the size)"
                << in_case
                << ". The inputs are valid, so an index or a loop bound of yours runs past the "
                   "end: check where each loop stops, and what its last pass reads.\n";
      return;
    }
    if (located && own_line) {
      std::cout << "  Diagnosis: your code threw this exception itself (the line above), on inputs "
                   "this test expects it to accept"
                << in_case
                << ". Either its condition is stricter than the handout's (compare it with what "
                   "the handout says must be rejected: these inputs are allowed, and the handout "
                   "defines their result), or it holds on values your code read or computed wrong "
                   "(an index past the end reads whatever lies there; an argument its caller, "
                   "shown under it, computed wrong, such as a size divided down to 0): check the "
                   "values that line tests, and where they come from.\n";
      return;
    }
    std::cout << "  Diagnosis: the code under test threw an exception (its text is above) on "
                 "inputs this test expects it to accept"
              << in_case
              << (located ? ", from a library function your line calls (above): check the "
                            "arguments it passes (a size or an index computed wrong; a bad_alloc "
                            "comes from a size far too large)"
                          : ". If it is your own input check, compare it with what the handout "
                            "says must be rejected (a value this test passes is allowed, and must "
                            "give the result the handout defines for it); if not, it came from "
                            "something your code calls (std::vector::at, a std::stoi, a bad_alloc "
                            "from a size computed wrong)")
              << ".\n";
  }
  void OnTestEnd(const ::testing::TestInfo& test) override {
    internal::set_crash_test("");
    exception_case.clear();
    if (!test.result()->Failed()) return;
    std::cout << internal::compiler_warnings_report();
    std::cout << "  Inputs came from WORKBOOK_SEED=" << base_seed()
              << "; replay them with: WORKBOOK_SEED=" << base_seed() << " ctest -R '"
              << test.test_suite_name() << "." << test.name() << "'\n";
  }
};

// AddressSanitizer and ThreadSanitizer report a crash themselves, with its stack and lines.
constexpr bool kSanitizer = WORKBOOK_SANITIZED;

}  // namespace

int run_all_tests(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new PrintSeedOnFailure);
  if (!kSanitizer) {
    // Line by line, so that what a test printed before a crash is not lost with stdout's buffer.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    internal::install_crash_report(argc > 0 ? argv[0] : "");
  }
  return RUN_ALL_TESTS();
}

}  // namespace workbook::testing
