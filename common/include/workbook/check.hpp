#pragma once
/// \file check.hpp
/// \brief Correctness against a float64 oracle, with a diagnosis that names the pattern of a
/// mismatch and the file to edit.
///
/// A check compares a kernel's output with the exact answer computed in double precision, within a
/// tolerance derived from the operation (see Tolerance), and reports max-abs error, norm-wise
/// relative error and ULP distance. When it fails it says, in this order: whether the kernel wrote
/// outside its output; whether the output changes between two runs (a race); which of the lab's
/// known mistakes it matches (each lab's catalogue, computed exactly); else a generic pattern in
/// the kernel's own terms (Model): "the last 3 elements were never written: check your tail loop",
/// "your grid covers only the first 1792 elements", "the output is transposed", ...

#include <workbook/buffer.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace workbook {

/// How a kernel does its work in parallel: the generic diagnoses speak that language (SIMD batches
/// and tail loops, threads and chunks, or a CUDA grid of blocks and threads), and a pattern that
/// cannot happen in it is not suggested.
enum class Model {
  simd,     ///< loops over SIMD batches with a scalar tail (labs 01, 02, 04)
  threads,  ///< work split into chunks or tasks run by several threads (lab 03)
  cuda,     ///< a CUDA kernel: a grid of blocks of threads (labs 05, 06)
};

/// The kernel a check is about, named in every message: which function, in which file.
struct Where {
  std::string function;       ///< e.g. "relu"
  std::string file;           ///< e.g. "labs/01_vectorized_relu/vector_ops.cpp"
  Model model = Model::simd;  ///< how it is parallelised, for the generic diagnoses
};

/// A mistake students of a lab make, with the wrong answer it gives computed exactly (in float64,
/// like the oracle). When a check fails, the output is compared with each mistake of the lab's
/// catalogue before any generic pattern: one that matches within the check's tolerance is named
/// ("your output matches the variance divided by cols - 1: layer_norm divides by cols ...").
struct Mistake {
  std::string what;    ///< what the wrong code computes: "the variance divided by cols - 1"
  std::string advice;  ///< why that is wrong and what to change, one or two sentences
  /// Element i of the wrong output (the check's logical indexing); NaN where the mistake leaves an
  /// element unwritten or NaN. For a reduction, answer(0) is the wrong result.
  std::function<double(std::size_t)> answer;
  /// What the rounding error of the wrong answer's float32 evaluation scales with, element by
  /// element (a wrong sum's: the sum of its own |terms|); empty: the check's own scale. Matching
  /// allows twice the check's bound on the larger of the two.
  std::function<double(std::size_t)> scale;
  /// Names the mistake the same in every case, where `what` speaks of one case's sizes ("the first
  /// 3 rows only"); empty: `what` does.
  std::string key;
  /// The mistake's name across cases: `key`, or `what` when it has none.
  const std::string& name() const { return key.empty() ? what : key; }
  /// Fitted to the output itself (statistics inferred from it), so that it matches whatever a
  /// kernel got wrong in its way: named when nothing narrower is, never in place of a narrower
  /// match (testing::Cases).
  bool broad = false;
};
/// Whether the mistake's output equals `want` on all n elements (up to float64 rounding; NaN where
/// want is NaN): then a case that fails rules the mistake out. One that is merely close does not,
/// as the kernel's own rounding may add to it.
bool gives_the_right_answer(const Mistake& m, std::size_t n,
                            const std::function<double(std::size_t)>& want);

/// A lab's catalogue for one check, built only when the check fails (a wrong answer may need a
/// pass over the inputs, or a matrix product).
using Mistakes = std::function<std::vector<Mistake>()>;

/// float32 unit roundoff u = 2^-24: one rounding to float changes a value by at most a factor 1 +-
/// u.
inline constexpr double kFloatUnitRoundoff = 0x1p-24;

/// How far a result may be from the oracle: |got - want| <= rel * scale + abs, where the scale is
/// |want| for an elementwise result and the sum of |terms| for a reduction (what rounding errors
/// scale with). Build it from the operation, not by guessing:
///   - exact(): selections and copies (ReLU), integer arithmetic;
///   - roundings(k): k float32 roundings on the way from inputs to result (a + b: 1; (a - b)^2: 2),
///     rel = gamma_k = k u / (1 - k u), the standard bound (Higham, Accuracy and Stability, 3.1);
///   - sum_of(n): a float32 reduction of n terms in any order, rel = gamma_n (with FMA or without).
struct Tolerance {
  double rel = 0;  ///< relative part, multiplied by the element's scale
  /// Absolute part: room for results in the denormal range, where rel means nothing.
  double abs = 0;
  std::string derivation;  ///< shown with a failure, so a student sees where the bound comes from

  /// Zero error allowed: the result must equal the oracle bit for bit (the sign of zero aside).
  static Tolerance exact();
  /// rel = gamma_k for k float32 roundings between inputs and result, abs = k denormal steps.
  static Tolerance roundings(int k);
  /// rel = gamma_terms: a float32 sum in any order, to be scaled by the sum of |terms|.
  static Tolerance sum_of(std::size_t terms);
};

/// gamma_k = k u / (1 - k u) for float32.
double gamma_float(double k);

/// A named input shown beside each mismatch ("x = -0.5").
struct Column {
  std::string name;                       ///< as the handout names it: "x", "a", "b"
  std::function<double(std::size_t)> at;  ///< the value at element i of the output's indexing
};
/// A Column over float inputs; `values` must outlive the check.
Column column(std::string name, std::span<const float> values);
/// A Column over int8 inputs (quantized tensors); `values` must outlive the check.
Column column(std::string name, std::span<const std::int8_t> values);

/// The logical shape of an output, for 2-D diagnoses (tails of rows or columns, transposition).
/// ld is the distance between rows in the buffer (>= cols); elements between cols and ld are
/// padding that a kernel must not write.
struct Shape {
  std::size_t rows = 1;  ///< logical rows
  std::size_t cols = 0;  ///< logical columns; 0: one row of the buffer's size()
  std::size_t ld = 0;    ///< elements from one row's start to the next; 0 means cols
};

/// Elements of type T in one SIMD register of this build (xsimd's default architecture): 16 floats
/// with AVX-512. For ElementwiseCheck::lanes.
template <class T>
std::size_t simd_lanes();

/// What to compare, and how.
struct ElementwiseCheck {
  Where where;                 ///< the kernel, named in every message
  Tolerance tolerance;         ///< the bound, derived from the operation (see Tolerance)
  std::vector<Column> inputs;  ///< shown beside mismatches, indexed like the output
  Shape shape;                 ///< default: one row of size() elements
  /// What the error of element i scales with; default |want(i)|. A matrix product's element is a
  /// sum of K products, so its scale is sum_k |a_ik| |b_kj| (with Tolerance::sum_of(K)).
  std::function<double(std::size_t)> scale;
  /// The lab's known mistakes for this kernel (see Mistake), tried first when the check fails.
  Mistakes mistakes;
  /// Elements per SIMD batch of the kernel's loop, for the tail diagnoses ("4 full batches of 16 +
  /// 3 left over"); 0: one register of the output's type. A loop over floats that writes int8
  /// (quantize) runs batches of floats.
  std::size_t lanes = 0;
  /// Poisons the output, runs the kernel again on the same inputs into the same buffer (and, for a
  /// GPU kernel, fetches it again). When set and the check fails, the output of the two runs is
  /// compared: an output that changes between two runs on the same inputs is a race (or a read
  /// of memory nothing wrote), and that is said before any pattern.
  std::function<void()> run_again;
};

/// How much a failed check's diagnosis tells, so that a test with many cases can report its most
/// telling failure first (testing::Cases). In increasing order: a named mistake beats a generic
/// pattern, which beats a bare observation.
enum class Specificity {
  none,      ///< passed, or nothing diagnosed
  observed,  ///< only the symptom: the output never written, all zeros, "no simple pattern"
  pattern,   ///< a generic pattern that says where to look (the tail, one lane, a shift, a write
             ///< past the end, an output that changes between runs)
  mistake,   ///< one of the lab's catalogue of mistakes, matched on exact values (see Mistake)
};

/// The outcome of a check: ok, or a failure a student can act on.
struct CheckResult {
  /// Every element within the tolerance, nothing written outside the output.
  bool ok = true;
  std::string summary;    ///< one line: what is wrong
  std::string diagnosis;  ///< the pattern found and what to fix
  std::string details;    ///< the first mismatches, with inputs, got and expected
  std::string tolerance;  ///< the bound used and its derivation
  std::string edit;       ///< "edit labs/...: relu"

  std::size_t checked = 0;      ///< elements compared
  std::size_t wrong = 0;        ///< elements outside the tolerance
  std::size_t first_wrong = 0;  ///< index of the first one (when wrong > 0)
  double max_abs_error = 0;     ///< over elements where both sides are finite
  double rel_error = 0;         ///< norm-wise: ||got - want||_2 / ||want||_2
  double max_ulps = 0;          ///< float outputs: largest error in units of the last place
  std::string mistake;          ///< the catalogue's Mistake::what that the output matched, if any
  /// The diagnosis's name, the same in every case (testing::Cases counts how many cases agree):
  /// the matched Mistake::name(), or a generic pattern's ("one accumulator left out"); "" when
  /// the diagnosis has none.
  std::string diagnosis_key;
  /// The mistake matched is a broad one (Mistake::broad): it ranks as a pattern.
  bool broad = false;
  /// The Mistake::name() of each mistake of the catalogue that this case rules out: where it
  /// failed, those whose output equals the right one here (had the student made one, this case
  /// would have passed); where a reduction passed, those whose result would have failed. Cases
  /// weighs a mistake that any of its cases rules out as what was observed, not as the student's.
  std::vector<std::string> ruled_out;
  /// Another catalogue mistake this output matches as well (a reduction's one number, or a
  /// small case, may fit several): testing::Cases reports the one that the most failing cases
  /// agree on.
  struct Match {
    std::string mistake;        ///< its Mistake::what
    std::string diagnosis_key;  ///< its Mistake::name()
    std::string diagnosis;      ///< "your output matches ...", as `diagnosis` would read
    bool broad = false;         ///< its Mistake::broad
  };
  /// The matches after the first (which is `mistake`), in the catalogue's order.
  std::vector<Match> other_matches;
  /// Records that the output matches m, whose diagnosis reads `diagnosis` ("your output matches
  /// ..."): the first match becomes `mistake` (and the diagnosis), a later one joins
  /// `other_matches`.
  void add_match(const Mistake& m, std::string diagnosis);
  bool unstable = false;  ///< the output changed between two runs on the same inputs
  /// How much the diagnosis tells; a result built by hand (a lab's own check) that names a mistake
  /// counts as Specificity::mistake, one that fails without a level as observed.
  Specificity specificity = Specificity::none;

  /// Everything above, formatted for a student.
  std::string report() const;
  /// ok: lets a test write `if (!result)`.
  explicit operator bool() const { return ok; }
};
/// Writes result.report().
std::ostream& operator<<(std::ostream& out, const CheckResult& result);

/// Compares an output buffer (with its poison and guards, see GuardedBuffer) with want(i), the
/// float64 answer for logical element i (row-major over shape.rows x shape.cols).
template <class T>
CheckResult check_elementwise(const GuardedBuffer<T>& got,
                              const std::function<double(std::size_t)>& want,
                              const ElementwiseCheck& how);

/// A float64 oracle of a reduction: result = finish(sum of term(i) for i < terms), where finish is
/// monotone increasing (identity for a dot product, sqrt for a Euclidean distance).
struct ReductionOracle {
  std::size_t terms = 0;                    ///< n, the number of terms summed
  std::function<double(std::size_t)> term;  ///< term i in float64, e.g. double(a[i]) * double(b[i])
  /// Applied to the sum (see above): identity, or sqrt for a distance.
  std::function<double(double)> finish = [](double s) { return s; };
  int extra_roundings = 1;  ///< roundings per term before it is summed (a[i] * b[i]: 1 without FMA)
  /// The test changed only the element right after the last one of each input (NaN, then 0), and
  /// the result changed with it: the kernel read past the end.
  bool read_past_the_end = false;
  /// Two calls on the same inputs gave different results.
  bool changes_between_calls = false;
};

/// The results check_reduction accepts: [lo, hi].
struct Interval {
  double lo = 0;  ///< the smallest result accepted
  double hi = 0;  ///< the largest
};
/// The interval check_reduction accepts for `oracle`'s reduction (see there); a NaN or infinite
/// answer gives [answer, answer].
Interval reduction_interval(const ReductionOracle& oracle);

/// Compares a reduction's result with the oracle, within gamma_{n + extra} * sum|terms| on the sum
/// (mapped through finish, plus one rounding of it). On failure it tries the lab's mistakes
/// (answer(0) each, within the same bound), then recognises the last or first k elements left out,
/// one SIMD lane or one accumulator of several summed, zero, and double counting.
CheckResult check_reduction(double got, const ReductionOracle& oracle, const Where& where,
                            const Mistakes& mistakes = {});

/// Checks that a kernel left an input as it was (it takes it as const; a cast can still write it).
CheckResult check_unchanged(std::span<const float> before, std::span<const float> after,
                            const Where& where, const std::string& name);

}  // namespace workbook
