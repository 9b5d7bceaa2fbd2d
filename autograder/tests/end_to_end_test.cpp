// The grader as a tool, on the self-test's prepared cache: a batch killed halfway and resumed, and
// the packages. (Single submissions are graded by the autograder.grade.* tests.)
#include <grade/archive.hpp>
#include <grade/prepare.hpp>
#include <grade/util.hpp>

#include <workbook/internal/subprocess.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace workbook::grade;

class EndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::path(WORKBOOK_SELFTEST_OUT) /
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  // Runs the grader to its end; its output goes to a log in the test's folder.
  int grader(std::vector<std::string> args) {
    args.insert(args.begin(), WORKBOOK_GRADER);
    const std::string log = (dir / "grader.log").string();
    std::string line;
    for (const std::string& a : args) line += shell_quote(a) + " ";
    return std::system((line + ">> " + shell_quote(log) + " 2>&1").c_str());
  }
  fs::path dir;
};

// A small class: two stubs, one that does not compile, one archive.
void make_class(const fs::path& folder) {
  const fs::path lab = "labs/01_vectorized_relu";
  const fs::path stub = fs::path(WORKBOOK_TRUSTED) / lab / "vector_ops.cpp";
  for (const char* name : {"ana", "ben", "cleo"}) {
    fs::create_directories(folder / name / lab);
    fs::copy_file(stub, folder / name / lab / "vector_ops.cpp");
  }
  write_text_atomic(folder / "cleo" / lab / "vector_ops.cpp", "this does not compile\n");
  fs::create_directories(folder / "tmp-dana" / lab);
  fs::copy_file(stub, folder / "tmp-dana" / lab / "vector_ops.cpp");
  const std::string tar = "tar -czf " + shell_quote((folder / "dana.tar.gz").string()) + " -C " +
                          shell_quote((folder / "tmp-dana").string()) + " labs";
  ASSERT_EQ(std::system(tar.c_str()), 0);
  fs::remove_all(folder / "tmp-dana");
}

TEST_F(EndToEnd, AFailedPrepareIsNeverUpToDateAndItsLabIsNotGradedAsASuccess) {
  // A lab whose trusted build fails (here: its configure, as when a dependency is missing).
  const fs::path overlay = dir / "overlay";
  write_text_atomic(
      overlay / "labs" / "98_broken" / "CMakeLists.txt",
      "message(FATAL_ERROR \"lab 98 needs libfoo, which is missing (a test of the grader)\")\n");
  const std::string cache = (dir / "cache").string();
  const std::vector<std::string> prepare = {
      "prepare", "--trusted", WORKBOOK_TRUSTED, "--overlay", overlay.string(),
      "--cache", cache,       "--labs",         "98",        "--allow-dirty"};
  EXPECT_NE(grader(prepare), 0) << "a prepare whose lab failed to build exits non-zero";
  const nlohmann::json recipes = read_json(fs::path(cache) / "recipes.json");
  EXPECT_FALSE(recipes.value("complete", true));
  EXPECT_FALSE(recipes["labs"]["98"]["available"].get<bool>());
  EXPECT_NE(grader(prepare), 0);
  const std::string log = read_text(dir / "grader.log");
  EXPECT_THAT(log, Not(HasSubstr("is up to date")))
      << "the second prepare must build again, not reuse a failed cache";
  EXPECT_THAT(log, HasSubstr("lab 98 needs libfoo"));

  // Grading that lab: the results say it was not graded, and so does the exit code (never 0 / 0 as
  // a success).
  const int status =
      grader({"grade", "@reference", "--labs", "98", "--cache", cache, "--no-prepare", "--out",
              (dir / "out").string(), "--work", (dir / "work").string()});
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << read_text(dir / "grader.log");
  EXPECT_THAT(read_text(dir / "grader.log"), HasSubstr("lab 98 was not graded on this machine"));
  EXPECT_EQ(read_json(dir / "out" / "record.json")["labs"][0]["status"], "unavailable");
}

// The generations of a cache folder (gen-*), by name.
std::set<std::string> generations(const fs::path& cache) {
  std::set<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(cache))
    if (e.path().filename().string().rfind("gen-", 0) == 0) names.insert(e.path().filename());
  return names;
}

TEST_F(EndToEnd, ARePrepareNeitherWaitsForARunningGradeNorChangesItsFiles) {
  // A cache of one lab whose configure fails (quick to prepare, and never up to date: every
  // prepare builds again).
  const fs::path overlay = dir / "overlay";
  write_text_atomic(overlay / "labs" / "98_broken" / "CMakeLists.txt",
                    "message(FATAL_ERROR \"lab 98 cannot be built (a test of the grader)\")\n");
  const fs::path cache = dir / "cache";
  const std::string prepare =
      shell_quote(WORKBOOK_GRADER) + " prepare --trusted " + shell_quote(WORKBOOK_TRUSTED) +
      " --overlay " + shell_quote(overlay.string()) + " --cache " + shell_quote(cache.string()) +
      " --labs 98 --allow-dirty >> " + shell_quote((dir / "grader.log").string()) + " 2>&1";
  const auto prepared = [&] {
    const int status = std::system(("timeout 600 " + prepare).c_str());
    return WIFEXITED(status) && WEXITSTATUS(status) != 124;  // lab 98 fails: not 0
  };
  ASSERT_TRUE(prepared()) << read_text(dir / "grader.log");
  const fs::path first = Cache::load(cache).dir;
  EXPECT_TRUE(fs::exists(first / "canary.json")) << "the generation was not proved";
  // A generation's folder is a cache pinned to it (as a batch grades a class with one).
  EXPECT_EQ(Cache::load(first).dir, first);
  EXPECT_EQ(Cache::load(first).root, cache);

  {
    // A grade running on the first generation (it holds the cache as grade() does).
    const CacheInUse grading(cache);
    ASSERT_EQ(grading.cache().dir, first);
    const std::string recipes = read_text(first / "recipes.json");
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(prepared()) << "the re-prepare waited for the running grade (killed after 600 s)";
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const fs::path second = Cache::load(cache).dir;
    EXPECT_NE(second, first) << "the re-prepare made no new generation";
    EXPECT_EQ(read_text(first / "recipes.json"), recipes)
        << "a file of the running grade's generation changed under it";
    EXPECT_EQ(generations(cache), (std::set<std::string>{first.filename(), second.filename()}));
    EXPECT_THAT(read_text(dir / "grader.log"),
                HasSubstr(first.filename().string() + " is still in use by a grade"));
    std::cout << "re-prepare during a grade: " << seconds << " s\n";
  }

  // Files of the layout before generations, and a prepare killed halfway: the next prepare that
  // completes removes them, and every generation no grade holds.
  write_text_atomic(cache / "src" / "labs" / "stale.txt", "from a cache made before generations\n");
  write_text_atomic(cache / "symbols-01.txt", "T relu\n");
  const fs::path current = Cache::load(cache).dir;
  const pid_t killed = fork();
  ASSERT_GE(killed, 0);
  if (killed == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + prepare).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool building = false;
  for (int i = 0; i < 6000 && !building; ++i) {
    building = generations(cache).size() > 2;  // its generation exists: it is building it
    if (!building) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(killed, SIGKILL);
  int status = 0;
  waitpid(killed, &status, 0);
  ASSERT_TRUE(building) << "the background prepare made no generation";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Cache::load(cache).dir, current) << "a killed prepare changed the current generation";
  EXPECT_TRUE(fs::exists(current / "recipes.json"));

  ASSERT_TRUE(prepared()) << read_text(dir / "grader.log");
  const fs::path last = Cache::load(cache).dir;
  EXPECT_EQ(generations(cache), std::set<std::string>{last.filename()})
      << "generations no grade holds (and the killed prepare's) are left";
  EXPECT_FALSE(fs::exists(cache / "src"));
  EXPECT_FALSE(fs::exists(cache / "symbols-01.txt"));
}

TEST_F(EndToEnd, BatchKilledHalfwayResumesWithoutLosingOrDuplicatingAResult) {
  make_class(dir / "class");
  const fs::path out = dir / "out";
  const std::vector<std::string> args = {WORKBOOK_GRADER,
                                         "batch",
                                         (dir / "class").string(),
                                         "--out",
                                         out.string(),
                                         "--cache",
                                         WORKBOOK_SELFTEST_CACHE,
                                         "--jobs",
                                         "2",
                                         "--labs",
                                         "01",
                                         "--no-perf",
                                         "--no-prepare",
                                         "--test-timeout",
                                         "20",
                                         "--seed",
                                         "7",
                                         "--work",
                                         (dir / "work").string()};
  {
    // The first run is killed (SIGKILL: no chance to clean up) once one result is in.
    workbook::Subprocess batch({.argv = args});
    const auto start = std::chrono::steady_clock::now();
    auto finished = [&] {
      int n = 0;
      if (fs::exists(out / "submissions"))
        for (const auto& e : fs::directory_iterator(out / "submissions"))
          n += e.path().filename().string()[0] != '.';
      return n;
    };
    while (finished() == 0 && std::chrono::steady_clock::now() - start < std::chrono::minutes(5))
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    batch.kill();
    batch.wait();
    ASSERT_GE(finished(), 1) << "no result within 5 minutes";
    ASSERT_LT(finished(), 4)
        << "the batch finished before it could be interrupted: nothing to resume";
  }
  std::set<std::string> first;
  std::map<std::string, std::string> started;
  for (const auto& e : fs::directory_iterator(out / "submissions")) {
    const std::string id = e.path().filename().string();
    if (id[0] == '.') continue;
    first.insert(id);
    started[id] = read_json(e.path() / "record.json").at("started_at");
  }
  // The second run grades only what is missing.
  std::vector<std::string> rest(args.begin() + 1, args.end());
  ASSERT_EQ(grader(rest), 0) << read_text(dir / "grader.log");
  std::vector<std::string> ids;
  for (const auto& e : fs::directory_iterator(out / "submissions"))
    ids.push_back(e.path().filename().string());
  std::sort(ids.begin(), ids.end());
  EXPECT_THAT(ids, ::testing::ElementsAre("ana", "ben", "cleo", "dana"))
      << "a partial result was left, or one is missing";
  for (const std::string& id : first)
    EXPECT_EQ(read_json(out / "submissions" / id / "record.json").at("started_at"), started[id])
        << id << " was graded twice";
  const std::string log = read_text(dir / "grader.log");
  EXPECT_THAT(log, HasSubstr(std::to_string(first.size()) + " already graded"));
  // The gradebook: one row per submission, no more.
  std::istringstream csv(read_text(out / "gradebook.csv"));
  std::vector<std::string> rows;
  for (std::string line; std::getline(csv, line);) rows.push_back(line.substr(0, line.find(',')));
  EXPECT_THAT(rows, ::testing::ElementsAre("id", "ana", "ben", "cleo", "dana"));
  EXPECT_EQ(read_json(out / "submissions" / "cleo" / "record.json")["labs"][0]["status"],
            "compile_error");
  EXPECT_EQ(read_json(out / "submissions" / "dana" / "record.json")["files"][0]["path"],
            "labs/01_vectorized_relu/vector_ops.cpp");
  EXPECT_TRUE(fs::exists(out / "summary.md"));
  EXPECT_TRUE(fs::exists(out / "summary" / "scores.svg"));
  EXPECT_THAT(read_text(out / "summary.md"), HasSubstr("4 submissions graded"));
}

TEST_F(EndToEnd, PackagesAGradescopeAutograderWithTheTrustedTree) {
  const fs::path zip = dir / "autograder.zip";
  ASSERT_EQ(grader({"package", "gradescope", "--out", zip.string(), "--trusted", WORKBOOK_TRUSTED,
                    "--allow-dirty"}),
            0)
      << read_text(dir / "grader.log");
  std::vector<std::string> names;
  for (const ArchiveEntry& e : read_archive(read_text(zip))) names.push_back(e.name);
  EXPECT_THAT(names, Contains("setup.sh"));
  EXPECT_THAT(names, Contains("run_autograder"));
  EXPECT_THAT(names, Contains("labs/01_vectorized_relu/vector_ops.cpp"));
  EXPECT_THAT(names, Contains("solutions/01_vectorized_relu/vector_ops.cpp"));
  EXPECT_THAT(names, Contains("autograder/labs/01_vectorized_relu/rubric.json"));
  for (const std::string& n : names)
    EXPECT_NE(n.rfind("build/", 0), 0u) << "a build output in the package: " << n;
}

TEST_F(EndToEnd, WritesAClassroomWorkflowWithTheRubricsPoints) {
  ASSERT_EQ(grader({"package", "classroom", "--out", dir.string(), "--trusted", WORKBOOK_TRUSTED,
                    "--cache", WORKBOOK_SELFTEST_CACHE}),
            0);
  const std::string yml = read_text(dir / ".github" / "workflows" / "classroom.yml");
  EXPECT_THAT(yml, HasSubstr("classroom-resources/autograding-command-grader@v1"));
  EXPECT_THAT(yml, HasSubstr("classroom-resources/autograding-grading-reporter@v1"));
  EXPECT_THAT(yml, HasSubstr("LAB01_RESULTS: \"${{ steps.lab01.outputs.result }}\""));
  EXPECT_THAT(yml, HasSubstr("ctest --test-dir build/lab01 -L correctness"));
  EXPECT_THAT(yml, Not(HasSubstr("max-score: 10\n"))) << "the points should come from the rubric";
}

// --- Nothing of a grade outlives it --------------------------------------------------------------

// Processes of a user, anywhere on the machine (a sandbox user: uid base + slot), whose command
// line holds `marker`.
int processes_of(uid_t uid, const std::string& marker = "") {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat s;
    if (stat(e.path().c_str(), &s) != 0 || s.st_uid != uid) continue;
    std::ifstream in(e.path() / "cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    n += cmdline.find(marker) != std::string::npos;
  }
  return n;
}

// A grade that sleeps in every call (self-test slow_relu), on a slot of its own: after it ends, and
// after a grader killed halfway (kill -9), no process of its sandbox user is left.
TEST_F(EndToEnd, NoProcessOfTheSandboxUserOutlivesAGradeOrAKilledGrader) {
  if (geteuid() != 0)
    GTEST_SKIP() << "not root: the sandbox runs as the grader's own user, whose other processes "
                    "cannot be told apart";
  const fs::path slow = fs::path(WORKBOOK_SELFTEST_SUBMISSIONS) / "slow_relu";
  const std::vector<std::string> common = {
      "--cache", WORKBOOK_SELFTEST_CACHE, "--no-prepare", "--labs", "01", "--no-perf",
      "--work",  (dir / "work").string()};
  const int slot = 21;
  const uid_t uid = 61000 + slot;  // WORKBOOK_GRADE_UID_BASE is not set in the tests
  std::vector<std::string> args = {"grade",  slow.string(),       "--out", (dir / "done").string(),
                                   "--slot", std::to_string(slot)};
  args.insert(args.end(), common.begin(), common.end());
  grader(args);
  EXPECT_EQ(processes_of(uid), 0) << "a process of the sandbox user outlived its grade";

  // Killed while its hidden tests run: the checker, the worker, everything goes with it.
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<std::string> argv = {
        WORKBOOK_GRADER,           "grade",  slow.string(),       "--out",
        (dir / "killed").string(), "--slot", std::to_string(slot)};
    argv.insert(argv.end(), common.begin(), common.end());
    std::vector<char*> c;
    for (std::string& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    freopen((dir / "killed.log").c_str(), "w", stderr);
    execv(c[0], c.data());
    _exit(127);
  }
  bool running = false;
  for (int i = 0; i < 600 && !running; ++i) {
    running = processes_of(uid, "sealed_worker") > 0;  // the hidden tests' worker
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  int left = processes_of(uid);
  for (int i = 0; i < 100 && left > 0; ++i, left = processes_of(uid))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(running) << "the grade never started its hidden tests' worker";
  EXPECT_EQ(left, 0) << "processes of the sandbox user outlived the killed grader by 5 s";
  // Its work folder's tmpfs goes too (the reaper unmounts it): no memory held by a dead grade.
  bool mounted = true;
  for (int i = 0; i < 100 && mounted; ++i) {
    mounted = read_text("/proc/self/mounts").find((dir / "work").string()) != std::string::npos;
    if (mounted) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(mounted) << "the killed grade's work folder is still mounted";
}

TEST_F(EndToEnd, AGraderFileTheSandboxCannotReadIsAnEnvironmentErrorNeverAZero) {
  if (geteuid() != 0)
    GTEST_SKIP() << "not root: the sandbox runs as the grader's own user, who can read the cache";
  // A library of the cache left unreadable to the sandbox's user (as a umask of 077 at prepare, or
  // an ACL, would leave it), for the time of one grade of the reference: the link fails on it.
  const fs::path library =
      Cache::load(WORKBOOK_SELFTEST_CACHE).dir / "build" / "common" / "libworkbook.a";
  ASSERT_TRUE(fs::exists(library)) << library;
  const fs::perms before = fs::status(library).permissions();
  fs::permissions(library, fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  const int status = grader({"grade", "@reference", "--out", (dir / "out").string(), "--cache",
                             WORKBOOK_SELFTEST_CACHE, "--no-prepare", "--labs", "01", "--no-perf",
                             "--work", (dir / "work").string()});
  fs::permissions(library, before, fs::perm_options::replace);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << "a lab not graded for the machine's fault exits 3";
  const nlohmann::json record = read_json(dir / "out" / "record.json");
  ASSERT_EQ(record.at("labs").size(), 1u);
  const nlohmann::json& lab = record["labs"][0];
  EXPECT_EQ(lab.at("status"), "environment_error") << lab.dump(2);
  EXPECT_THAT(lab.dump(), HasSubstr("libworkbook.a"));
  EXPECT_THAT(lab.dump(), Not(HasSubstr("does not link"))) << "the student is not blamed";
  EXPECT_THAT(read_text(dir / "grader.log"), HasSubstr("a file of the grader's own"));
}

TEST_F(EndToEnd, GradesWithItsFoldersBehindASymlinkWithASpaceAndUnderUmask077) {
  // Cache, work and out folders reached through a symlinked folder whose name has a space and
  // non-ASCII letters (as scratch and home folders on clusters are), from a shell whose umask
  // is 077: the reference still gets full marks.
  const fs::path real = dir / "real scratch";
  fs::create_directories(real / "work");
  const fs::path link = dir / "lien vers le dépôt";
  fs::create_directory_symlink(real, link);
  const std::string grade =
      "umask 077 && " + shell_quote(WORKBOOK_GRADER) + " grade @reference --no-prepare --labs 01 " +
      "--no-perf --cache " + shell_quote(WORKBOOK_SELFTEST_CACHE) + " --work " +
      shell_quote((link / "work").string()) + " --out " + shell_quote((link / "out").string()) +
      " > " + shell_quote((dir / "grader.log").string()) + " 2>&1";
  const int status = std::system(("sh -c " + shell_quote(grade)).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << read_text(dir / "grader.log");
  const nlohmann::json record = read_json(real / "out" / "record.json");
  EXPECT_EQ(record.at("score"), record.at("max_score")) << read_text(dir / "grader.log");
  EXPECT_GT(record.at("max_score").get<double>(), 0);
  // The results keep the instructor's umask: their folder is the instructor's alone.
  EXPECT_EQ(fs::status(real / "out").permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST_F(EndToEnd, TheKitAndTheCacheComeFromTheCommittedTreeOnly) {
  // An instructor who tried lab 01 in the same clone: the stub implemented, a scratch file added.
  const fs::path tree = dir / "clone";
  if (std::system(("git clone --quiet " + shell_quote(WORKBOOK_TRUSTED) + " " +
                   shell_quote(tree.string()) + " 2>/dev/null")
                      .c_str()) != 0)
    GTEST_SKIP() << WORKBOOK_TRUSTED << " is not a git checkout: nothing is committed to compare";
  const fs::path stub = tree / "labs/01_vectorized_relu/vector_ops.cpp";
  write_text_atomic(stub, read_text(stub) + "// my try at relu\n");
  write_text_atomic(tree / "labs/01_vectorized_relu/scratch.cpp", "// notes\n");
  const std::string kit = (dir / "kit").string();
  const int refused = grader({"kit", "--trusted", tree.string(), "--out", kit, "--no-verify"});
  ASSERT_TRUE(WIFEXITED(refused));
  EXPECT_EQ(WEXITSTATUS(refused), 2);
  const std::string log = read_text(dir / "grader.log");
  EXPECT_THAT(log, HasSubstr("2 uncommitted file(s), and the student kit would be made from them"));
  EXPECT_THAT(log, HasSubstr("labs/01_vectorized_relu/vector_ops.cpp"));
  EXPECT_THAT(log, HasSubstr("labs/01_vectorized_relu/scratch.cpp"));
  EXPECT_FALSE(fs::exists(kit)) << "nothing is exported from a tree that is refused";
  const int prepare = grader(
      {"prepare", "--trusted", tree.string(), "--cache", (dir / "cache").string(), "--labs", "01"});
  ASSERT_TRUE(WIFEXITED(prepare));
  EXPECT_EQ(WEXITSTATUS(prepare), 2);
  EXPECT_THAT(read_text(dir / "grader.log"), HasSubstr("the grading cache (@stub"));
  // Asked for, the working tree goes out as it is.
  EXPECT_EQ(
      grader({"kit", "--trusted", tree.string(), "--out", kit, "--no-verify", "--allow-dirty"}), 0);
  EXPECT_THAT(read_text(fs::path(kit) / "labs/01_vectorized_relu/vector_ops.cpp"),
              HasSubstr("my try at relu"));
}

TEST_F(EndToEnd, AKitWithAnImplementedStubOrAReferenceSlowerThanItsProfileIsNotReady) {
  // Committed, so that the kit takes them: lab 02's stub with its matmul written (its TODO gone),
  // and a profile no reference reaches (145% of the roof: the reference's kernel is "too slow").
  const fs::path tree = dir / "clone";
  if (std::system(("git clone --quiet " + shell_quote(WORKBOOK_TRUSTED) + " " +
                   shell_quote(tree.string()) + " 2>/dev/null")
                      .c_str()) != 0)
    GTEST_SKIP() << WORKBOOK_TRUSTED << " is not a git checkout: nothing is committed to compare";
  const fs::path stub = tree / "labs/02_matmul/matmul.cpp";
  std::string code = read_text(stub);
  const std::string todo = "throw workbook::NotImplemented(\"matmul\");";
  ASSERT_NE(code.find(todo), std::string::npos);
  write_text_atomic(stub, code.replace(code.find(todo), todo.size(), "// my matmul"));
  const fs::path profile = tree / "labs/02_matmul/tests/reference_profile.json";
  nlohmann::json p = read_json(profile);
  for (auto& [name, c] : p.at("cases").items()) c["fraction_of_roof"] = 1.45;
  write_text_atomic(profile, p.dump(2));
  ASSERT_EQ(std::system(("git -C " + shell_quote(tree.string()) +
                         " -c user.name=t -c user.email=t@example.org commit -qam 'tried lab 02'")
                            .c_str()),
            0);

  const int status = grader({"kit", "--trusted", tree.string(), "--out", (dir / "kit").string(),
                             "--verify-labs", "02", "--jobs", "2"});
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string log = read_text(dir / "grader.log");
  EXPECT_THAT(log, HasSubstr("the stub labs/02_matmul/matmul.cpp no longer leaves matmul"));
  EXPECT_THAT(log, HasSubstr("lab02.perf.matmul: the reference itself is judged too slow"));
  EXPECT_THAT(log, HasSubstr("tools/update_reference_data.sh 02"));
  EXPECT_THAT(log, HasSubstr("ok: its README.md speaks only of what the kit has"));
  EXPECT_THAT(log, Not(HasSubstr("the kit is ready")));
  // The README speaks of the kit as it is: none of the instructors' parts.
  const std::string readme = read_text(dir / "kit/README.md");
  EXPECT_THAT(readme, Not(HasSubstr("kit: instructors only")));
  EXPECT_THAT(readme, Not(HasSubstr("autograder/")));
  EXPECT_THAT(readme, Not(HasSubstr("--preset solutions")));
}

TEST_F(EndToEnd, ACacheIsBuiltPerLabAndServesAnyOfItsLabsWithoutRebuilding) {
  // The self-test's cache was prepared for lab 99, then for every lab (prepare_selftest_cache.sh):
  // the second prepare built every lab but 99, which stays in the generation that built it.
  const Cache cache = Cache::load(WORKBOOK_SELFTEST_CACHE);
  ASSERT_TRUE(cache.labs.count("99") && cache.labs.count("01"));
  const fs::path first = cache.labs.at("99").generation;
  EXPECT_NE(first, cache.dir) << "lab 99 was built again with the others";
  EXPECT_EQ(cache.labs.at("01").generation, cache.dir);
  EXPECT_EQ(cache.generations(), (std::set<fs::path>{first, cache.dir}));
  EXPECT_TRUE(fs::exists(first / "build" / "grade-manifest" / "lab99.json"));
  EXPECT_FALSE(fs::exists(cache.dir / "build" / "grade-manifest" / "lab99.json"));
  const std::string second_prepare =
      read_text(fs::path(WORKBOOK_SELFTEST_OUT).parent_path() / "prepare.log");
  EXPECT_THAT(second_prepare, HasSubstr("lab99: kept as " + first.filename().string()));
  EXPECT_THAT(second_prepare, HasSubstr("(labs 01;02;03;04;05;06)"));
  // Each generation proved its own labs (its canary tried them).
  EXPECT_EQ(read_json(first / "canary.json").value("labs", std::vector<std::string>{}),
            std::vector<std::string>{"99"});
  EXPECT_THAT(read_json(cache.dir / "canary.json").value("labs", std::vector<std::string>{}),
              Not(Contains("99")));
  // Preparing it for lab 01 alone, or for 01 and 99, finds it up to date (the labs asked for are
  // not part of its key).
  const fs::path overlay = fs::path(WORKBOOK_TRUSTED) / "autograder/selftest/overlay";
  for (const char* labs : {"01", "01,99"})
    EXPECT_EQ(grader({"prepare", "--trusted", WORKBOOK_TRUSTED, "--overlay", overlay.string(),
                      "--cache", WORKBOOK_SELFTEST_CACHE, "--labs", labs, "--allow-dirty"}),
              0);
  const std::string log = read_text(dir / "grader.log");
  EXPECT_THAT(log, HasSubstr("is up to date"));
  EXPECT_THAT(log, Not(HasSubstr("preparing the grading cache")));
}

TEST_F(EndToEnd, PackagesOfSomeLabsPrepareAndGradeThoseLabsOnly) {
  const fs::path zip = dir / "lab01.zip";
  ASSERT_EQ(grader({"package", "gradescope", "--out", zip.string(), "--trusted", WORKBOOK_TRUSTED,
                    "--labs", "01", "--allow-dirty"}),
            0)
      << read_text(dir / "grader.log");
  std::map<std::string, std::string> files;
  for (const ArchiveEntry& e : read_archive(read_text(zip))) files[e.name] = e.data;
  EXPECT_THAT(files["run_autograder"],
              HasSubstr("workbook-grade grade /autograder/submission --labs 01 \\\n"));
  EXPECT_THAT(files["setup.sh"], HasSubstr("workbook-grade prepare --labs 01 --cache"));
  const fs::path pl = dir / "prairielearn";
  ASSERT_EQ(grader({"package", "prairielearn", "--out", pl.string(), "--trusted", WORKBOOK_TRUSTED,
                    "--labs", "1,3", "--allow-dirty"}),
            0);
  EXPECT_THAT(read_text(pl / "run.sh"), HasSubstr("grade /grade/student --labs 01,03 \\\n"));
  EXPECT_THAT(read_text(pl / "Dockerfile"), HasSubstr("prepare --labs 01,03 --cache"));
  EXPECT_EQ(fs::status(pl / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::owner_exec);
}

TEST_F(EndToEnd, ACacheThatHasNotProvedItselfGradesNothing) {
  // The self-test's cache proved itself when it was prepared (canary.json). Recorded as proved by
  // another build of the grader, or as failed for lab 01, it grades nothing of lab 01.
  const fs::path file = Cache::load(WORKBOOK_SELFTEST_CACHE).dir / "canary.json";
  ASSERT_TRUE(fs::exists(file)) << "prepare did not run the canary";
  const nlohmann::json proved = read_json(file);
  EXPECT_TRUE(proved.value("passed", false)) << proved.dump(2);
  const auto grade = [&](const std::string& labs) {
    return grader({"grade", "@reference", "--no-prepare", "--no-perf", "--labs", labs, "--cache",
                   WORKBOOK_SELFTEST_CACHE, "--out", (dir / ("out" + labs)).string(), "--work",
                   (dir / "work").string()});
  };
  nlohmann::json other = proved;
  other["grader"] = "another build";
  write_json(file, other);
  const int refused = grade("01");
  nlohmann::json failed = proved;
  failed["passed"] = false;
  failed["problems"] = {"lab 01: @reference got 0.0 of 61.0 (Relu.Tail: a made-up failure)"};
  write_json(file, failed);
  const int failed_lab = grade("01");
  const int other_lab = grade("99");
  write_json(file, proved);
  ASSERT_TRUE(WIFEXITED(refused) && WIFEXITED(failed_lab) && WIFEXITED(other_lab));
  EXPECT_EQ(WEXITSTATUS(refused), 2);
  EXPECT_EQ(WEXITSTATUS(failed_lab), 2);
  EXPECT_EQ(WEXITSTATUS(other_lab), 0) << "lab 99's canary passed: it is graded";
  const std::string log = read_text(dir / "grader.log");
  EXPECT_THAT(log, HasSubstr("nothing graded: the grading cache"));
  EXPECT_THAT(log, HasSubstr("was proved by another build of workbook-grade"));
  EXPECT_THAT(log, HasSubstr("failed its canary"));
  EXPECT_THAT(log, HasSubstr("lab 01: @reference got 0.0 of 61.0"));
  EXPECT_FALSE(fs::exists(dir / "out01" / "record.json")) << "a refused cache graded something";
}

TEST_F(EndToEnd, BatchOnlyRegradesTheStudentsNamedAndKeepsTheRest) {
  make_class(dir / "class");
  const fs::path out = dir / "out";
  const auto batch = [&](std::vector<std::string> more) {
    std::vector<std::string> args = {"batch",     (dir / "class").string(), "--out",  out.string(),
                                     "--cache",   WORKBOOK_SELFTEST_CACHE,  "--labs", "01",
                                     "--no-perf", "--no-prepare",           "--seed", "7",
                                     "--work",    (dir / "work").string()};
    args.insert(args.end(), more.begin(), more.end());
    return grader(args);
  };
  batch({"--jobs", "2"});
  const std::string before = read_text(out / "gradebook.csv");
  ASSERT_EQ(std::count(before.begin(), before.end(), '\n'), 5) << before;  // header + 4 students
  write_text_atomic(dir / "grader.log", "");
  EXPECT_EQ(batch({"--only", "ben,dana"}), 0) << read_text(dir / "grader.log");
  const std::string log = read_text(dir / "grader.log");
  EXPECT_THAT(log, HasSubstr("4 submissions, 2 to grade again (--only)"));
  const std::string after = read_text(out / "gradebook.csv");
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 5) << "every student is still there";
  EXPECT_THAT(after, HasSubstr("\nana,")) << after;
  const int unknown = batch({"--only", "zed"});
  ASSERT_TRUE(WIFEXITED(unknown));
  EXPECT_EQ(WEXITSTATUS(unknown), 2);
  EXPECT_THAT(read_text(dir / "grader.log"),
              HasSubstr("--only zed: there is no submission with that id"));
}

}  // namespace
