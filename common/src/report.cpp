#include <workbook/report.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace workbook {

RooflineCells roofline_cells(const Summary& time, const Analysis& a) {
  return {.median = format_seconds(time.median),
          .spread = "+-" + format_percent(time.rel_iqr() / 2),
          .gbs = format_fixed(a.gbs),
          .gops = format_fixed(a.gops, a.gops < 10 ? 2 : 1),
          .of_roof = format_percent(a.fraction_of_roof)};
}

Table::Table(std::vector<std::string> header) {
  rows_.push_back(std::move(header));
}

void Table::add(std::vector<std::string> row) {
  row.resize(rows_.front().size());
  rows_.push_back(std::move(row));
}

std::string Table::str() const {
  std::vector<std::size_t> width(rows_.front().size(), 0);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream out;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string& cell = rows_[r][c];
      const std::string pad(width[c] - cell.size(), ' ');
      out << (c == 0 ? "  " : "  ") << (c == 0 ? cell + pad : pad + cell);
    }
    out << "\n";
    if (r == 0) {
      std::size_t total = 0;
      for (std::size_t w : width) total += w + 2;
      out << "  " << std::string(total - 2, '-') << "\n";
    }
  }
  return out.str();
}

// --- SVG roofline --------------------------------------------------------------------------------

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string escape(const std::string& s) {
  return xml_escape(s);
}

std::string n2(double v) {
  return format_fixed(v, 1);
}

// A roof of the plot: a bandwidth (a slanted line) or a compute rate (a horizontal one).
struct Roof {
  std::string name;
  double value;  // GB/s or G ops/s
  bool bandwidth;
  const char* dash;  // "" solid: one thread; dashed: all threads; dotted: a cache level
  const char* colour;
};

std::string dash_attribute(const char* dash) {
  return *dash ? std::string(" stroke-dasharray=\"") + dash + "\"" : "";
}

}  // namespace

std::string roofline_svg(const Ceilings& c, const std::vector<PlotPoint>& points,
                         const PlotOptions& options) {
  const std::string& title = options.title;
  const std::vector<Traffic>& bandwidths = options.bandwidths;
  const bool int8 = options.compute == Compute::int8;
  const std::string ops_unit = int8 ? "OP" : "FLOP";
  const double peak_1t = int8 ? c.int8_dot_1t_gops : c.fma_1t_gflops;
  const double peak_all = int8 ? c.int8_dot_all_gops : c.fma_all_gflops;
  const std::string peak_name = int8 ? "int8 dot peak" : "FMA peak";
  std::vector<Roof> roofs;
  double lowest_bandwidth = c.copy_all_gbs, highest_bandwidth = 0;
  for (Traffic t : bandwidths) {
    const Roofs r = roofs_for({.ops = 1, .bytes = 1, .traffic = t}, c);
    const bool cache = t == Traffic::l1;
    roofs.push_back({r.bandwidth_name + " " + n2(r.bandwidth_gbs) + " GB/s", r.bandwidth_gbs, true,
                     cache ? "2 3" : "", cache ? "#868e96" : "#333"});
    lowest_bandwidth = std::min(lowest_bandwidth, r.bandwidth_gbs);
    highest_bandwidth = std::max(highest_bandwidth, r.bandwidth_gbs);
  }
  const bool gpu = !c.device.empty();
  if (gpu) {
    // A GPU's roofs are the whole device's: no per-core lines (see Ceilings::device).
    roofs.push_back({roofs_for({.ops = 1, .bytes = 1, .compute = options.compute}, c).compute_name +
                         " " + n2(peak_all) + " G" + ops_unit + "/s",
                     peak_all, false, "", "#333"});
  } else {
    roofs.push_back(
        {"copy, " + std::to_string(c.threads) + " threads " + n2(c.copy_all_gbs) + " GB/s",
         c.copy_all_gbs, true, "6 4", "#333"});
    roofs.push_back({peak_name + ", " + std::to_string(c.threads) + " threads " + n2(peak_all) +
                         " G" + ops_unit + "/s",
                     peak_all, false, "6 4", "#333"});
    roofs.push_back({peak_name + ", 1 core " + n2(peak_1t) + " G" + ops_unit + "/s", peak_1t, false,
                     "", "#333"});
  }
  const double peak = peak_all, ridge_low = peak_1t / std::max(highest_bandwidth, c.copy_all_gbs),
               ridge_high = peak_all / lowest_bandwidth;

  // Axes: decades that hold every roof's ridge and every point, with some margin.
  double x_lo = std::min(ridge_low, ridge_high) / 8, x_hi = std::max(ridge_low, ridge_high) * 8;
  double y_lo = lowest_bandwidth * x_lo, y_hi = peak * 2;
  for (const PlotPoint& p : points) {
    if (p.intensity > 0) {
      x_lo = std::min(x_lo, p.intensity / 2);
      x_hi = std::max(x_hi, p.intensity * 2);
    }
    if (p.gops > 0) y_lo = std::min(y_lo, p.gops / 2);
  }
  x_lo = std::pow(10, std::floor(std::log10(x_lo)));
  x_hi = std::pow(10, std::ceil(std::log10(x_hi)));
  y_lo = std::pow(10, std::floor(std::log10(y_lo)));
  y_hi = std::pow(10, std::ceil(std::log10(y_hi)));

  const double left = 80, right = 560, top = 50, bottom = 430, width = 820, height = 500;
  auto X = [&](double v) {
    return left + (right - left) * (std::log10(v) - std::log10(x_lo)) /
                      (std::log10(x_hi) - std::log10(x_lo));
  };
  auto Y = [&](double v) {
    return bottom - (bottom - top) * (std::log10(v) - std::log10(y_lo)) /
                        (std::log10(y_hi) - std::log10(y_lo));
  };
  auto f = [](double v) { return format_fixed(v, 1); };

  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << format_fixed(width, 0)
    << "\" height=\"" << format_fixed(height, 0) << "\" viewBox=\"0 0 " << format_fixed(width, 0)
    << " " << format_fixed(height, 0)
    << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
    // The plot's accessible name (and its tooltip), also where it is inlined in an HTML report.
    << "<title>" << escape(title.empty() ? "Roofline" : title) << "</title>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << left << "\" y=\"28\" font-size=\"16\" font-weight=\"bold\">" << escape(title)
    << "</text>\n"
    << "<defs><clipPath id=\"plot\"><rect x=\"" << left << "\" y=\"" << top << "\" width=\""
    << right - left << "\" height=\"" << bottom - top << "\"/></clipPath></defs>\n";
  // Grid and decade labels.
  for (double v = x_lo; v <= x_hi * 1.001; v *= 10) {
    s << "<line x1=\"" << f(X(v)) << "\" y1=\"" << top << "\" x2=\"" << f(X(v)) << "\" y2=\""
      << bottom << "\" stroke=\"#e4e4e4\"/>\n<text x=\"" << f(X(v)) << "\" y=\"" << bottom + 18
      << "\" text-anchor=\"middle\">"
      << escape(format_fixed(v, v < 1 ? int(std::ceil(-std::log10(v))) : 0)) << "</text>\n";
  }
  for (double v = y_lo; v <= y_hi * 1.001; v *= 10) {
    s << "<line x1=\"" << left << "\" y1=\"" << f(Y(v)) << "\" x2=\"" << right << "\" y2=\""
      << f(Y(v)) << "\" stroke=\"#e4e4e4\"/>\n<text x=\"" << left - 8 << "\" y=\"" << f(Y(v) + 4)
      << "\" text-anchor=\"end\">"
      << escape(format_fixed(v, v < 1 ? int(std::ceil(-std::log10(v))) : 0)) << "</text>\n";
  }
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << right - left << "\" height=\""
    << bottom - top << "\" fill=\"none\" stroke=\"#444\"/>\n"
    << "<text x=\"" << (left + right) / 2 << "\" y=\"" << bottom + 40
    << "\" text-anchor=\"middle\">arithmetic intensity (" << escape(ops_unit)
    << " per byte)</text>\n"
    << "<text transform=\"translate(24," << (top + bottom) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">G" << escape(ops_unit) << "/s</text>\n";

  // Roofs: each bandwidth rises until it meets the compute roof of the same thread count.
  s << "<g clip-path=\"url(#plot)\">\n";
  for (const Roof& r : roofs) {
    const std::string dash = dash_attribute(r.dash);
    const char* roof_colour = r.colour;
    if (r.bandwidth) {
      const bool many = gpu || r.name.find("threads") != std::string::npos;
      const double cap = many ? peak_all : peak_1t;
      const double knee = cap / r.value;
      s << "<polyline fill=\"none\" stroke=\"" << roof_colour << "\" stroke-width=\"1.5\"" << dash
        << " points=\"" << f(X(x_lo)) << "," << f(Y(r.value * x_lo)) << " " << f(X(knee)) << ","
        << f(Y(cap)) << "\"/>\n";
    } else {
      s << "<line x1=\"" << left << "\" y1=\"" << f(Y(r.value)) << "\" x2=\"" << right << "\" y2=\""
        << f(Y(r.value)) << "\" stroke=\"" << roof_colour << "\" stroke-width=\"1.5\"" << dash
        << "/>\n";
    }
  }
  // The ridge of the first (the kernel's own) one-thread roofline: memory-bound to its left.
  const double ridge = peak_1t / roofs.front().value;
  s << "<circle cx=\"" << f(X(ridge)) << "\" cy=\"" << f(Y(peak_1t))
    << "\" r=\"3\" fill=\"#333\"/>\n"
    << "<text x=\"" << f(X(ridge) + 6) << "\" y=\"" << f(Y(peak_1t) + 16)
    << "\" fill=\"#333\">ridge " << escape(format_fixed(ridge, ridge < 10 ? 1 : 0)) << "</text>\n";
  // Points. Beyond a few, they are numbered on the plot and named in a key beside it.
  std::size_t labelled = 0;
  for (const PlotPoint& p : points)
    labelled += options.label_others || p.role != PlotPoint::Role::other;
  const bool numbered = labelled > 3;
  int other = 0, number = 0;
  std::vector<std::pair<const char*, std::string>> key;
  for (const PlotPoint& p : points) {
    if (!(p.intensity > 0 && p.gops > 0)) continue;
    if (!options.label_others && p.role == PlotPoint::Role::other) {
      // A class scatter: one faint dot per submission, drawn under the labelled points.
      s << "<circle cx=\"" << f(X(p.intensity)) << "\" cy=\"" << f(Y(p.gops))
        << "\" r=\"3\" fill=\"#5c940d\" fill-opacity=\"0.45\"/>\n";
      continue;
    }
    ++number;
    const char* colour = p.role == PlotPoint::Role::student     ? "#d9480f"
                         : p.role == PlotPoint::Role::reference ? "#1c7ed6"
                                                                : "#5c940d";
    const double dy = numbered                               ? 4
                      : p.role == PlotPoint::Role::student   ? 16
                      : p.role == PlotPoint::Role::reference ? -8
                                                             : 4 + 14 * (other++ % 3);
    const std::string label = numbered ? std::to_string(number) : p.label;
    if (numbered) key.emplace_back(colour, std::to_string(number) + "  " + p.label);
    s << "<circle cx=\"" << f(X(p.intensity)) << "\" cy=\"" << f(Y(p.gops)) << "\" r=\"5\" fill=\""
      << colour << "\" stroke=\"white\"/>\n<text x=\"" << f(X(p.intensity) + 8) << "\" y=\""
      << f(Y(p.gops) + dy) << "\" fill=\"" << colour << "\">" << escape(label) << "</text>\n";
  }
  s << "</g>\n";
  // Legend: the roofs, as measured on this machine.
  double ly = top + 4;
  s << "<text x=\"" << right + 16 << "\" y=\"" << ly + 8
    << "\" font-weight=\"bold\">measured on this " << (gpu ? "GPU" : "machine") << "</text>\n";
  for (const Roof& r : roofs) {
    ly += 22;
    s << "<line x1=\"" << right + 16 << "\" y1=\"" << ly << "\" x2=\"" << right + 44 << "\" y2=\""
      << ly << "\" stroke=\"" << r.colour << "\" stroke-width=\"1.5\"" << dash_attribute(r.dash)
      << "/>\n"
      << "<text x=\"" << right + 50 << "\" y=\"" << ly + 4 << "\">" << escape(r.name)
      << "</text>\n";
  }
  ly += 30;
  std::vector<std::pair<const char*, const char*>> kinds = {{"#d9480f", "your kernel"},
                                                            {"#1c7ed6", "reference"}};
  if (std::any_of(points.begin(), points.end(),
                  [](const PlotPoint& p) { return p.role == PlotPoint::Role::other; }))
    kinds.emplace_back("#5c940d",
                       options.label_others ? "other versions, libraries" : "other submissions");
  for (const auto& [colour, name] : kinds) {
    s << "<circle cx=\"" << right + 30 << "\" cy=\"" << ly << "\" r=\"5\" fill=\"" << colour
      << "\"/>\n"
      << "<text x=\"" << right + 50 << "\" y=\"" << ly + 4 << "\">" << name << "</text>\n";
    ly += 20;
  }
  s << "<text x=\"" << right + 16 << "\" y=\"" << ly + 16 << "\" fill=\"#666\" font-size=\"10\">"
    << escape((gpu ? c.device : c.machine.cpu_model).substr(0, 40)) << "</text>\n"
    << "<text x=\"" << right + 16 << "\" y=\"" << ly + 30 << "\" fill=\"#666\" font-size=\"10\">"
    << escape((gpu ? std::string("measured ") : c.machine.simd + ", measured ") + c.measured_at)
    << "</text>\n";
  ly += 52;
  for (const auto& [colour, line] : key) {
    s << "<text x=\"" << right + 16 << "\" y=\"" << ly << "\" fill=\"" << colour
      << "\" font-size=\"11\">" << escape(line) << "</text>\n";
    ly += 15;
  }
  s << "</svg>\n";
  // Grow the canvas to fit the legend and the key (text widths estimated at 0.6 em a character).
  double widest = 0;
  for (const Roof& r : roofs)
    widest = std::max(widest, 50 + 7.2 * static_cast<double>(r.name.size()));
  for (const auto& [colour, line] : key)
    widest = std::max(widest, 16 + 6.6 * static_cast<double>(line.size()));
  std::string svg = s.str();
  const double needed_width = std::max(width, right + widest + 12),
               needed_height = std::max(height, ly + 10);
  const auto size = [](double w, double h) {
    return "width=\"" + format_fixed(w, 0) + "\" height=\"" + format_fixed(h, 0) +
           "\" viewBox=\"0 0 " + format_fixed(w, 0) + " " + format_fixed(h, 0);
  };
  const std::string from = size(width, height);
  if (const auto at = svg.find(from); at != std::string::npos)
    svg.replace(at, from.size(), size(needed_width, needed_height));
  return svg;
}

std::filesystem::path results_dir() {
  if (const char* p = std::getenv("WORKBOOK_RESULTS_DIR"); p != nullptr && *p != '\0') return p;
  return "workbook-results";
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

nlohmann::json to_json(const Summary& s) {
  return {{"count", s.count},   {"min", s.min},       {"q1", s.q1},
          {"median", s.median}, {"q3", s.q3},         {"max", s.max},
          {"mean", s.mean},     {"stddev", s.stddev}, {"rel_iqr", s.rel_iqr()},
          {"cv", s.cv()}};
}

nlohmann::json to_json(const Analysis& a) {
  return {
      {"seconds", a.seconds},
      {"ops", a.work.ops},
      {"ops_unit", a.work.ops_unit},
      {"bytes", a.work.bytes},
      {"threads", a.work.threads},
      {"traffic", to_string(a.work.traffic)},
      {"compute", to_string(a.work.compute)},
      {"gbs", a.gbs},
      {"gops", a.gops},
      {"intensity", a.intensity},
      {"ridge", a.roofs.ridge()},
      {"bandwidth_roof", {{"name", a.roofs.bandwidth_name}, {"gbs", a.roofs.bandwidth_gbs}}},
      {"compute_roof", {{"name", a.roofs.compute_name}, {"gops", a.roofs.compute_gops}}},
      {"attainable_gops", a.attainable_gops},
      {"fraction_of_roof", a.fraction_of_roof},
      {"fraction_of_bandwidth", a.fraction_of_bandwidth},
      {"fraction_of_compute", a.fraction_of_compute},
      {"memory_bound_model", a.memory_bound_model},
      {"bound", to_string(a.bound)},
      {"at_roofline", a.at_roofline},
  };
}

}  // namespace workbook
