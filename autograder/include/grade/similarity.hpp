#pragma once
/// \file similarity.hpp
/// \brief Similar submissions of one lab, found by Dick Grune's similarity tester (`sim_c++`,
/// Debian's similarity-tester): token-based, so renamed identifiers, changed comments and layout do
/// not hide a copy. What every student got (the handed-out stub) is no evidence: the runs a
/// submission shares with the handout are taken out of it before submissions are compared, as
/// MOSS's base files are.

#include <grade/util.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace workbook::grade {

/// One submission's files of a lab (or the handout's), path -> text, in a fixed order.
struct SourceSet {
  std::string id;  ///< the submission's id; "handout" for the stub
  std::vector<std::pair<std::string, std::string>> files;

  /// The files one after the other, each ending with a newline: what sim reads.
  std::string joined() const;
  /// "vector_ops.cpp:12" for a line (1-based) of joined().
  std::string where(int line) const;
};

/// A run of matching tokens: lines (1-based, inclusive) of each side's joined() text.
struct MatchRun {
  int a_first = 0, a_last = 0, b_first = 0, b_last = 0;
  int tokens = 0;
};

/// Two submissions above the threshold.
struct SimilarPair {
  std::string a, b;            ///< ids, a < b
  double a_in_b = 0;           ///< % of a's own tokens (the handout's runs left out) found in b
  double b_in_a = 0;           ///< the same the other way (sim's percentages are not symmetric)
  std::vector<MatchRun> runs;  ///< read for the first SimilarityOptions::runs_for pairs only
  std::string view;  ///< the side-by-side page, relative to the summary (set by the summary)

  double percent() const { return a_in_b > b_in_a ? a_in_b : b_in_a; }
};

struct LabSimilarity {
  std::string lab;
  bool checked = false;
  std::string not_checked;  ///< why not, in a sentence naming the next step, when !checked
  std::size_t submissions = 0;
  std::size_t handout_files = 0;  ///< the stub's files subtracted (0: none was found)
  double threshold = 0;
  std::vector<SimilarPair> pairs;                  ///< by percent, highest first
  std::vector<std::vector<std::string>> clusters;  ///< three or more linked by pairs, each sorted
  /// Per submission, the lines (of its joined() text) taken out as the handout's.
  std::map<std::string, std::set<int>> handout_lines;
  double seconds = 0;
};

struct SimilarityOptions {
  double threshold = 60;            ///< % of a submission's own tokens found in another
  std::string program = "sim_c++";  ///< looked up on PATH
  fs::path scratch;                 ///< a folder for sim's input files (emptied, then removed)
  /// The runs (one more sim per pair) are read for this many pairs, the most similar first: the
  /// ones the summary lists with a side-by-side view.
  std::size_t runs_for = 100;
};

/// Compares every pair of `submissions` of one lab, with `handout` subtracted. When sim_c++ is not
/// installed, returns !checked and says so (nothing else depends on it).
LabSimilarity compare_lab(const std::string& lab, const std::vector<SourceSet>& submissions,
                          const SourceSet& handout, const SimilarityOptions& options);

/// A self-contained HTML page: both submissions side by side, each matching run coloured and
/// numbered on both sides, with a table of the runs (lines in each file, tokens); the lines taken
/// out as the handout's (LabSimilarity::handout_lines) greyed.
std::string side_by_side_html(const std::string& lab, const SimilarPair& pair, const SourceSet& a,
                              const SourceSet& b, const LabSimilarity& similarity);

}  // namespace workbook::grade
