// Anomalies (see anomalies.hpp). The thresholds are deliberately loose: this is a list to read,
// not a verdict, and each line carries the numbers it was raised on.
#include <grade/anomalies.hpp>

#include <grade/report.hpp>

#include <workbook/format.hpp>

namespace workbook::grade {
namespace {

// Near the roof: beyond this fraction of what the machine's measured ceilings allow.
constexpr double kNearRoof = 0.9;
// "Much faster" and "much shorter": at most this time ratio, at most this share of the bytes.
constexpr double kMuchFaster = 0.67;
constexpr double kMuchShorter = 0.5;

std::string x(double v) {
  return workbook::format_fixed(v, 2) + "x";
}

}  // namespace

std::vector<Anomaly> find_anomalies(const std::vector<GradeResult>& results,
                                    const std::map<std::string, std::uint64_t>& reference_bytes) {
  std::vector<Anomaly> out;
  for (const GradeResult& r : results) {
    // The grading's own flags of visible passes against sealed failures, with the failing tests.
    for (const LabResult& l : r.labs) {
      for (const Item& v : l.items) {
        if (v.source != Source::visible || !v.details.contains("flag")) continue;
        const std::string flag = v.details.value("flag", std::string());
        if (flag.find("sealed tests") == std::string::npos) continue;
        bool seen = false;
        for (const Anomaly& a : out)
          seen = seen ||
                 (a.id == r.id && a.lab == l.number && a.evidence.rfind(v.function + ":", 0) == 0);
        if (seen) continue;
        std::string failing;
        for (const Item& h : l.items)
          if (h.source == Source::hidden && h.function == v.function &&
              h.status == ItemStatus::failed)
            failing += (failing.empty() ? "" : ", ") + h.test;
        out.push_back({r.id, l.number, "visible passed, sealed failed",
                       v.function + ": every visible test passed; the sealed tests " +
                           (failing.empty() ? std::string("of it failed") : failing) + " failed"});
      }
      std::uint64_t bytes = 0;
      for (const SubmittedFile& f : r.files)
        if (f.path.find("/" + l.folder + "/") != std::string::npos) bytes += f.bytes;
      const auto reference = reference_bytes.find(l.number);
      for (const Item& i : l.items) {
        if (i.source != Source::perf || !i.details.contains("ratio")) continue;
        const double ratio = i.details.value("ratio", 0.0);
        const double roof = i.details.value("fraction_of_roof", 0.0);
        if (roof >= kNearRoof)
          out.push_back(
              {r.id, l.number, "near or past the roofline",
               i.test + " reached " + workbook::format_percent(roof) +
                   " of the roofline this machine allows, at " + x(ratio) +
                   " the reference's time" +
                   (i.details.value("implausible", false) ? " (not credited: implausible)" : "")});
        // The first measurement against the re-measurement's rounds (both in the rounds' terms).
        const double q1 = i.details.value("ratio_q1", 0.0), q3 = i.details.value("ratio_q3", 0.0);
        const double median = i.details.value("ratio_median", 0.0);
        if (i.details.contains("first_attempt_ratio") && q1 > 0 && q3 > 0 && median > 0) {
          const double first = i.details.value("first_attempt_ratio", 0.0);
          if (first < q1 || first > q3)
            out.push_back({r.id, l.number, "changed on re-measurement",
                           i.test + " measured " + x(first) + " first and " + x(median) +
                               " when measured again (the rounds' interval " + x(q1) + " to " +
                               x(q3) + ")"});
        }
        if (reference != reference_bytes.end() && reference->second > 0 && bytes > 0 &&
            ratio <= kMuchFaster &&
            static_cast<double>(bytes) <= kMuchShorter * static_cast<double>(reference->second))
          out.push_back({r.id, l.number, "much faster from much shorter code",
                         i.test + " at " + x(ratio) + " the reference's time from " +
                             std::to_string(bytes) + " bytes of source (the reference's: " +
                             std::to_string(reference->second) + ")"});
      }
    }
  }
  return out;
}

}  // namespace workbook::grade
