#pragma once
/// \file prepare.hpp
/// \brief The grader's trusted build, made once and reused for every submission: a copy of the
/// trusted tree, configured with WORKBOOK_IMPL=labs, every part that does not depend on the
/// student's files built, and per lab a recipe of what to compile and link for a submission.
///
/// Layout of a cache folder:
///   recipes.json     which generation is current, and its recipes (a copy of the generation's)
///   gen-<when>-<id>/ a generation: the labs one prepare built, never changed once it is current
///     src/             the trusted tree (solutions/ and autograder/ readable by the grader only)
///     build/           its build (per lab build-NN/ when a lab does not configure with the others)
///     recipes.json     per lab: student files, compile and link commands, tests, perf cases,
///                      and the generation that built it
///     symbols-NN.txt   global symbols the trusted link inputs define (a submission may not
///                      redefine them)
///     canary.json      the canary's verdict on the labs this generation built (see canary.hpp)
///     prepare.log      the configure and build output
///   ceilings.json    this machine's measured ceilings (kept from one generation to the next)
///
/// A cache is built per lab: a prepare builds, in a new generation, only the labs asked for that
/// the current generation lacks (or whose build failed), and its recipes keep every lab prepared
/// before from the same trusted tree where it is, in the generation that built it. Preparing lab
/// 05 after labs 01-04 builds lab 05 alone; grading any subset of prepared labs builds nothing.
///
/// A prepare builds a new generation beside the current one, proves it (the canary) and then makes
/// it current; a grade holds every generation its labs live in until it ends, so that a
/// re-prepare never waits for the grades that are running and never changes a file under them. A
/// generation that neither the current recipes nor a grade holds is removed by the next prepare.

#include <grade/rubric.hpp>
#include <grade/util.hpp>

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace workbook::grade {

/// One compile of a student source: the build's command with @SRC@ and @OBJ@ for the paths.
struct CompileRecipe {
  std::string source;  ///< relative to the lab folder ("vector_ops.cpp")
  std::vector<std::string> argv;
  std::vector<std::string> include_dirs;  ///< made visible in the jail
};

/// One link of an executable with the student's objects: @IMPL@ stands for them, @OUT@ for the
/// output; every other input is a trusted file of the build.
struct LinkRecipe {
  std::vector<std::string> argv;
  std::vector<std::string> inputs;  ///< trusted files the link reads (visible in the jail)
};

struct LabRecipe {
  std::string number;   ///< "01"
  std::string folder;   ///< "01_vectorized_relu"
  fs::path generation;  ///< the generation folder that built this lab (its src/ and build)
  std::string key;      ///< TreeKeys::labs of the tree it was built from
  std::string name() const { return "lab" + number; }
  /// The trusted tree this lab was built from (its generation's copy).
  fs::path src() const { return generation / "src"; }
  std::string edit() const {
    return "labs/" + folder + "/" + (sources.empty() ? "" : sources.front());
  }

  bool available = false;
  std::string unavailable;  ///< why not (the trusted build of this lab failed)
  bool gpu = false;         ///< a CUDA lab: its programs run with the GPU (SandboxSpec::gpu)

  std::vector<std::string> sources;  ///< compiled student files, relative to the lab folder
  std::vector<std::string>
      student_files;  ///< everything taken from a submission (sources + extra_files)
  std::vector<CompileRecipe> compiles;
  std::map<std::string, LinkRecipe> links;  ///< "tests", "perf", "sealed_worker"
  fs::path lab_dir;                         ///< the trusted lab folder (cache/src/labs/<folder>)
  fs::path build_dir;
  std::string
      perf_reference;   ///< trusted worker with the reference kernels (empty: use the profile)
  std::string profile;  ///< labs/<folder>/tests/reference_profile.json
  std::string checker;  ///< sealed checker (empty: no hidden tests)
  /// The reference's slowest call of each function in the hidden tests (seconds, timed at
  /// prepare): a function's per-call deadline when a submission is graded is derived from it.
  std::map<std::string, double> call_seconds;
  std::string probe;
  std::vector<std::string> visible_tests, hidden_tests, perf_cases;
  fs::path symbols;  ///< symbols-NN.txt
  std::vector<std::string> rubric_warnings;

  nlohmann::json to_json() const;
  static LabRecipe from_json(const nlohmann::json& j);
};

struct Cache {
  fs::path root;    ///< the cache folder (its locks, its pointer recipes.json, the ceilings)
  fs::path dir;     ///< the current generation's folder under root (what one prepare built)
  std::string key;  ///< TreeKeys::shared of the tree it was made from
  std::string prepared_at;
  fs::path ceilings;
  std::map<std::string, LabRecipe> labs;  ///< by number

  /// The generation folders the labs live in (with dir): what a grade holds while it runs.
  std::set<fs::path> generations() const;
  /// The rubric of a lab (its rubric.json, or the default rubric).
  Rubric rubric(const LabRecipe& lab) const;
  /// Reads recipes.json of a cache folder (its current generation) or of a generation's folder
  /// (that generation); throws when the cache was not prepared.
  static Cache load(const fs::path& root);
};

struct PrepareOptions {
  fs::path trusted;  ///< the instructor's tree (with solutions/ and autograder/)
  fs::path cache;
  fs::path overlay;  ///< extra files laid over the trusted tree (the self-test's lab 99)
  std::vector<std::string> labs;  ///< numbers; empty: every lab
  bool force = false;             ///< rebuild even when the key matches
  bool allow_dirty = false;       ///< build from a working tree that differs from its last commit
  int jobs = 2;
  /// Runs on a new generation's folder before it is made current (the canary; see canary.hpp).
  std::function<void(const fs::path& generation)> prove;
};

/// What the trusted builds depend on, as keys: a cache whose `shared` key differs is built again
/// whole; a lab whose own key differs is built again alone.
struct TreeKeys {
  /// The tree outside every lab's folders (the harness, the build files, the grader), this
  /// machine's compilers and CPU, and the cache's format.
  std::string shared;
  /// Per lab ("01"): `shared` and its own folders: labs/NN_*, solutions/NN_* and
  /// autograder/labs/NN_*, of the trusted tree and of the overlay.
  std::map<std::string, std::string> labs;
};
/// The keys of a trusted tree with its `overlay` (empty: none), over their project_files(): what
/// git ignores (a build folder, a scratch copy) is not a source.
TreeKeys tree_keys(const fs::path& trusted, const fs::path& overlay);

/// Makes (or reuses) the cache. Progress goes to `log`. Throws with the reason when the trusted
/// tree does not build at all; a lab that fails alone is marked unavailable.
Cache prepare(const PrepareOptions& options, std::ostream& log);

/// Reads the global symbols (name and strong or weak) nm lists in `files`.
std::map<std::string, char> defined_symbols(const std::vector<std::string>& nm_output_lines);

/// A flock(2) on a file (made when missing), held while the object lives: shared or exclusive,
/// waiting for it, or exclusive only if it is free now (held() says whether it was).
class FileLock {
 public:
  enum class Mode { shared, exclusive, exclusive_if_free };
  FileLock(const fs::path& file, Mode mode);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

/// The cache as a grade uses it: loaded under the cache's shared lock, which is let go at once,
/// and every generation its labs live in held (shared) until this object is destroyed, so that no
/// prepare removes the files the grade is using; a prepare meanwhile makes a new generation and
/// does not wait.
class CacheInUse {
 public:
  explicit CacheInUse(const fs::path& root);
  const Cache& cache() const { return cache_; }

 private:
  Cache cache_;
  std::vector<std::unique_ptr<FileLock>> hold_;
};

/// What a trusted build depends on besides the tree: the compilers and this CPU's model and flags
/// (the labs compile with -march=native), as text.
std::string build_identity();

/// Runs a trusted command (cmake, ninja, nm, a listing) and returns its exit code and output.
struct CommandResult {
  int code = -1;
  std::string output;
};
CommandResult run_command(const std::vector<std::string>& argv, const fs::path& cwd = {},
                          double timeout_seconds = 3600);

/// Builds a Ninja build folder (`cmake --build dir -j jobs [-- extra...]`) as run_command() does,
/// and meanwhile says how far it is every `every_seconds` on `log`: the steps done of those a dry
/// run counted (from .ninja_log) and about how long is left at the pace so far, so that minutes
/// of compiling are not minutes of silence. `what` names the build ("the trusted build").
CommandResult build_with_progress(const fs::path& dir, int jobs, const std::string& what,
                                  std::ostream& log, const std::vector<std::string>& extra = {},
                                  double every_seconds = 20);

}  // namespace workbook::grade
