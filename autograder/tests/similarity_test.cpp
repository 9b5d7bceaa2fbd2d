// The class summary's similarity check, on a tiny class made from the self-test's submissions:
// copies with their identifiers renamed, their functions in another order and their comments
// changed are paired with their original; submissions written independently are not, though all
// of them start from the same handed-out stub. And a record re-scored under a changed rubric.
#include <grade/rescore.hpp>
#include <grade/similarity.hpp>
#include <grade/summary.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

using namespace workbook::grade;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFolder = "01_vectorized_relu";
const std::string kFile = "vector_ops.cpp";

std::string selftest_source(const std::string& name) {
  // Made whole in the build tree (autograder.selftest_submissions): some are stored as patches.
  return read_text(fs::path(WORKBOOK_SELFTEST_SUBMISSIONS) / name / "labs" / kFolder / kFile);
}

// Every variable the file declares gets another name (function names stay: the lab's interface).
std::string renamed(const std::string& text) {
  static const std::regex declared(
      R"(\b(?:float|auto|std::size_t|int)\s+&?([a-z_]\w*)\b(?!\s*\())");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), declared);
       it != std::sregex_iterator(); ++it)
    names.insert((*it)[1]);
  std::string out = text;
  int k = 0;
  for (const std::string& n : names)
    out = std::regex_replace(out, std::regex("\\b" + n + "\\b"), "renamed_" + std::to_string(k++));
  return out;
}

// The function definitions inside the namespace, in reverse order.
std::string reordered(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  int depth = 0;
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t start = kNone;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string code = lines[i].substr(0, lines[i].find("//"));
    const std::size_t end = code.find_last_not_of(' ');
    if (start == kNone && depth == 1 && code.find('(') != std::string::npos &&
        end != std::string::npos && code[end] == '{')
      start = i;
    for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (start != kNone && depth == 1) {
      blocks.emplace_back(start, i);
      start = kNone;
    }
  }
  EXPECT_GE(blocks.size(), 2u) << "the base submission has functions to reorder";
  std::vector<std::string> pieces;
  for (const auto& [a, b] : blocks) {
    std::string piece;
    for (std::size_t i = a; i <= b; ++i) piece += lines[i] + "\n";
    pieces.push_back(piece);
  }
  std::string out;
  std::size_t next = 0;
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    for (; next < blocks[k].first; ++next) out += lines[next] + "\n";
    out += pieces[blocks.size() - 1 - k];
    next = blocks[k].second + 1;
  }
  for (; next < lines.size(); ++next) out += lines[next] + "\n";
  return out;
}

std::string recommented(const std::string& text) {
  return std::regex_replace(text, std::regex("//[^\n]*"), "// (my own notes)");
}

// A batch's folder as grading leaves it: a record per submission and the sources it took.
fs::path make_class(const std::string& name, const std::map<std::string, std::string>& sources) {
  const fs::path out = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  fs::remove_all(out);
  for (const auto& [id, text] : sources) {
    const std::string path = "labs/" + kFolder + "/" + kFile;
    GradeResult r;
    r.id = id;
    r.files = {{path, text.size(), "hash-" + id}};
    LabResult l;
    l.number = "01";
    l.folder = kFolder;
    r.labs = {l};
    write_json(out / "submissions" / id / "record.json", r.to_json());
    write_text_atomic(out / "submissions" / id / "sources" / path, text);
  }
  return out;
}

TEST(Similarity, RenamedAndReorderedCopiesArePairedAndIndependentOnesAreNot) {
  const std::string wrong = selftest_source("wrong"), caching = selftest_source("caching"),
                    forged = selftest_source("forged_output");
  const fs::path out =
      make_class("workbook-similarity", {{"ana", wrong},
                                         {"ben", recommented(renamed(wrong))},
                                         {"cid", reordered(wrong)},
                                         {"dan", caching},
                                         {"eve", recommented(reordered(renamed(caching)))},
                                         {"fay", forged}});
  SummaryOptions o;
  o.trusted = WORKBOOK_TRUSTED;
  o.similarity_threshold = 60;
  std::ostringstream log;
  write_summary(out, o, log);
  const std::string md = read_text(out / "summary.md");
  const std::string html = read_text(out / "summary.html");
  EXPECT_TRUE(fs::exists(out / "gradebook.csv"));
  if (find_on_path("sim_c++").empty()) {
    // The rest of the summary stands, and it says plainly what is missing.
    EXPECT_THAT(md, HasSubstr("Similarity was not checked: sim_c++ is not installed"));
    fs::remove_all(out);
    return;
  }
  EXPECT_THAT(html, HasSubstr("<h2>Similar submissions</h2>"));
  EXPECT_THAT(md, HasSubstr("(the handout subtracted: `vector_ops.cpp`)"));
  const std::string csv = read_text(out / "summary" / "similarity-lab01.csv");
  std::set<std::pair<std::string, std::string>> paired;
  std::istringstream rows(csv);
  std::string row;
  std::getline(rows, row);  // the header
  while (std::getline(rows, row)) {
    const std::size_t comma = row.find(',');
    paired.insert(
        {row.substr(0, comma), row.substr(comma + 1, row.find(',', comma + 1) - comma - 1)});
  }
  const std::set<std::pair<std::string, std::string>> expected = {
      {"ana", "ben"}, {"ana", "cid"}, {"ben", "cid"}, {"dan", "eve"}};
  EXPECT_EQ(paired, expected) << csv << log.str();
  EXPECT_THAT(md, HasSubstr("- A cluster of 3: `ana`, `ben`, `cid`"));
  // The side-by-side view: both texts, their runs coloured and listed.
  const std::string view = read_text(out / "summary" / "similarity" / "lab01" / "ana--cid.html");
  EXPECT_THAT(view, HasSubstr("<h2>ana</h2>"));
  EXPECT_THAT(view, HasSubstr("<h2>cid</h2>"));
  EXPECT_THAT(view, HasSubstr("title=\"run 1\""));
  EXPECT_THAT(view, HasSubstr("vector_ops.cpp:"));
  EXPECT_THAT(html, HasSubstr("href=\"summary/similarity/lab01/ana--cid.html\""));

  // Without the handout subtracted, the independent submissions share the stub and look alike:
  // what the subtraction is for.
  SourceSet ana{"ana", {{kFile, wrong}}}, fay{"fay", {{kFile, forged}}};
  SourceSet stub{"handout",
                 {{kFile, read_text(fs::path(WORKBOOK_TRUSTED) / "labs" / kFolder / kFile)}}};
  SimilarityOptions so;
  so.threshold = 0;
  so.scratch = out / "scratch";
  const LabSimilarity with = compare_lab("01", {ana, fay}, stub, so);
  const LabSimilarity without = compare_lab("01", {ana, fay}, SourceSet{}, so);
  ASSERT_EQ(without.pairs.size(), 1u);
  const double before = without.pairs[0].percent();
  const double after = with.pairs.empty() ? 0 : with.pairs[0].percent();
  EXPECT_GT(before, 60) << "the stub's own code, shared by every submission";
  EXPECT_LT(after, before / 2);
  fs::remove_all(out);
}

}  // namespace
