#pragma once
/// \file markdown_html.hpp
/// \brief The reports' Markdown (CommonMark with GitHub's pipe tables) rendered by cmark-gfm: as an
/// HTML fragment for report.html and summary.html, and as plain text for platforms that show text
/// preformatted (PrairieLearn).

#include <string>
#include <string_view>
#include <vector>

namespace workbook::grade {

/// Markdown as an HTML fragment. Raw HTML in the text is not passed through (cmark's safe mode, its
/// default: a comment replaces it) and links to javascript:, vbscript:, file: and data: URLs are
/// emptied: student output ends up in these reports.
std::string markdown_to_html(std::string_view markdown);

/// The same Markdown as plain text: no heading, emphasis, code or escape marks; tables stay as rows
/// of cells between pipes; lines are not wrapped.
std::string markdown_to_text(std::string_view markdown);

/// A report written twice from one text: as Markdown (report.md, summary.md), each figure an image
/// link to its file, and as one self-contained HTML page, the Markdown rendered by markdown_to_html
/// and each figure's SVG inline.
class MarkdownDocument {
 public:
  /// Markdown, appended as it is.
  void add(std::string markdown);
  /// A plot in a paragraph of its own: `file` is where its SVG is written, relative to the
  /// Markdown file; `svg` is the grader's own (trusted) drawing.
  void add_figure(std::string alt, std::string file, std::string svg);
  std::string markdown() const;
  /// `title` is text: escaped here.
  std::string html_page(std::string_view title) const;

 private:
  struct Part {
    std::string markdown;  // when not a figure
    std::string alt, file, svg;
    bool figure = false;
  };
  std::vector<Part> parts_;
};

}  // namespace workbook::grade
