#pragma once
/// \file report.hpp
/// \brief How results are shown: a console table, JSON records, an SVG roofline plot and Markdown
/// feedback, written next to the test results.

#include <workbook/ceilings.hpp>
#include <workbook/format.hpp>
#include <workbook/roofline.hpp>
#include <workbook/stats.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace workbook {

/// A timed kernel's cells in every roofline table (the perf test's console table and Markdown, a
/// worker's stand-alone table, the bench), formatted in this one place.
struct RooflineCells {
  std::string median;   ///< "11.2 ms"
  std::string spread;   ///< "+-3%": half the interquartile range over the median
  std::string gbs;      ///< achieved GB/s, one decimal
  std::string gops;     ///< achieved GFLOP/s (GOP/s), two decimals under 10, else one
  std::string of_roof;  ///< "79%" of the roofline time
};
/// The cells of a kernel that took `time` (its median on the roofline: `analysis`).
RooflineCells roofline_cells(const Summary& time, const Analysis& analysis);

/// Text made safe inside XML, SVG and HTML: & < > " escaped.
std::string xml_escape(std::string_view text);

/// A console table: the first column left-aligned, the others right-aligned.
class Table {
 public:
  /// A table with these column titles; their count fixes the number of columns.
  explicit Table(std::vector<std::string> header);
  /// Appends a row, cut or padded with empty cells to the header's width.
  void add(std::vector<std::string> row);
  /// The table as text: columns as wide as their widest cell, a rule under the header.
  std::string str() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

/// A point on a roofline plot.
struct PlotPoint {
  /// Whose point it is, which sets its colour and where its label goes.
  enum class Role {
    student,    ///< the kernel under test (orange)
    reference,  ///< the reference solution (blue)
    other,      ///< anything else: a numbered version, a library baseline, a classmate
  };
  std::string label;        ///< shown next to the point, or in the key
  double intensity = 0;     ///< operations per byte
  double gops = 0;          ///< achieved rate
  Role role = Role::other;  ///< colour and label placement
};

/// What a roofline plot shows besides its points.
struct PlotOptions {
  std::string title;  ///< drawn above the plot
  /// Bandwidth roofs to draw for one thread (the first is the points' own, whose ridge is marked);
  /// the copy roof of all threads is always drawn.
  std::vector<Traffic> bandwidths = {Traffic::copy, Traffic::l1};
  Compute compute = Compute::fp32;  ///< which compute roofs (FMA or int8 dot peak), and the unit
  /// false: points of Role::other are small unlabelled dots, out of the key (a class scatter of
  /// many submissions); the student and reference points keep their labels.
  bool label_others = true;
};

/// An SVG roofline: log-log axes, the measured roofs, the ridge point, and the points, labelled
/// (numbered, with a key, when there are more than three).
std::string roofline_svg(const Ceilings& ceilings, const std::vector<PlotPoint>& points,
                         const PlotOptions& options);

/// Where results go: $WORKBOOK_RESULTS_DIR, else ./workbook-results.
std::filesystem::path results_dir();

/// Writes `text` to `path`, creating its folders.
void write_file(const std::filesystem::path& path, const std::string& text);

/// The JSON record of a summary: its fields, plus rel_iqr and cv.
nlohmann::json to_json(const Summary& summary);
/// The JSON record of a roofline analysis: the work, the achieved rates, both roofs with their
/// names, and the verdict, as the perf tests and benches write them.
nlohmann::json to_json(const Analysis& analysis);

}  // namespace workbook
