#include <grade/markdown_html.hpp>

#include <grade/util.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

namespace workbook::grade {
namespace {

struct Free {
  void operator()(char* p) const { std::free(p); }
};
struct FreeNode {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
};
struct FreeParser {
  void operator()(cmark_parser* p) const { cmark_parser_free(p); }
};

// Safe mode is cmark's default (CMARK_OPT_UNSAFE is never set); UTF-8 is checked again, as the
// text may hold a student's bytes.
constexpr int kOptions = CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8;

// A parsed document and the extensions its renderers need (the table's, for its rows).
struct Document {
  std::unique_ptr<cmark_parser, FreeParser> parser;
  std::unique_ptr<cmark_node, FreeNode> root;
};

Document parse(std::string_view markdown) {
  // The registry of extensions is process-wide and filled without a lock: once.
  static std::once_flag registered;
  std::call_once(registered, [] { cmark_gfm_core_extensions_ensure_registered(); });
  cmark_syntax_extension* table = cmark_find_syntax_extension("table");
  if (table == nullptr)
    throw std::runtime_error(
        "cmark-gfm has no table extension: the grader's library libcmark-gfm-extensions is not the "
        "one it was built with; reinstall libcmark-gfm-extensions-dev (Debian 12) and rebuild");
  Document d{std::unique_ptr<cmark_parser, FreeParser>(cmark_parser_new(kOptions)), nullptr};
  if (!d.parser) throw std::bad_alloc();
  if (cmark_parser_attach_syntax_extension(d.parser.get(), table) == 0)
    throw std::runtime_error("cmark-gfm refused its own table extension: rebuild the grader");
  cmark_parser_feed(d.parser.get(), markdown.data(), markdown.size());
  d.root.reset(cmark_parser_finish(d.parser.get()));
  if (!d.root) throw std::bad_alloc();
  return d;
}

std::string taken(char* rendered) {
  if (rendered == nullptr) throw std::bad_alloc();
  const std::unique_ptr<char, Free> owned(rendered);
  return owned.get();
}

}  // namespace

std::string markdown_to_html(std::string_view markdown) {
  const Document d = parse(markdown);
  return taken(cmark_render_html(d.root.get(), kOptions,
                                 cmark_parser_get_syntax_extensions(d.parser.get())));
}

std::string markdown_to_text(std::string_view markdown) {
  const Document d = parse(markdown);
  // The plain-text renderer writes a code block's lines as they are: indented four spaces here,
  // they stay apart from the grader's own lines (a compiler's message quoting the student's
  // "Score: 100 / 100" does not read as the score).
  const std::unique_ptr<cmark_iter, void (*)(cmark_iter*)> it(cmark_iter_new(d.root.get()),
                                                              cmark_iter_free);
  for (cmark_event_type e; (e = cmark_iter_next(it.get())) != CMARK_EVENT_DONE;) {
    cmark_node* node = cmark_iter_get_node(it.get());
    if (e != CMARK_EVENT_ENTER || cmark_node_get_type(node) != CMARK_NODE_CODE_BLOCK) continue;
    const std::string code = cmark_node_get_literal(node) ? cmark_node_get_literal(node) : "";
    std::string indented;
    for (std::size_t start = 0; start < code.size();) {
      const std::size_t end = std::min(code.find('\n', start), code.size());
      if (end > start) indented += "    " + code.substr(start, end - start);  // blank: no spaces
      indented += "\n";
      start = end + 1;
    }
    cmark_node_set_literal(node, indented.c_str());
  }
  return taken(cmark_render_plaintext(d.root.get(), kOptions, 0));  // width 0: no wrapping
}

void MarkdownDocument::add(std::string markdown) {
  parts_.push_back({.markdown = std::move(markdown)});
}

void MarkdownDocument::add_figure(std::string alt, std::string file, std::string svg) {
  parts_.push_back(
      {.alt = std::move(alt), .file = std::move(file), .svg = std::move(svg), .figure = true});
}

std::string MarkdownDocument::markdown() const {
  std::string md;
  for (const Part& p : parts_) md += p.figure ? "![" + p.alt + "](" + p.file + ")\n\n" : p.markdown;
  return md;
}

std::string MarkdownDocument::html_page(std::string_view title) const {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
      html_escape(title) +
      "</title>\n<style>body{font-family:Helvetica,Arial,sans-serif;max-width:1000px;margin:2em "
      "auto;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid "
      "#ccc;padding:4px "
      "8px;text-align:left}pre{background:#f6f8fa;padding:8px;white-space:pre-wrap;"
      "font-size:12px}figure{margin:1em 0}</style></head><body>\n";
  // Consecutive Markdown parts are rendered together: a construct may span two of them.
  std::string pending;
  for (const Part& p : parts_) {
    if (!p.figure) {
      pending += p.markdown;
      continue;
    }
    h += markdown_to_html(pending);
    pending.clear();
    h += "<figure>\n" + p.svg + "</figure>\n";
  }
  h += markdown_to_html(pending);
  return h + "</body></html>\n";
}

}  // namespace workbook::grade
