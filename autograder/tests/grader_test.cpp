// The grader's parts that need no build: rubrics and perf tiers, command lines and patterns, and
// the outputs (Gradescope, PrairieLearn, CSV) of a made-up result.
#include <grade/hash.hpp>
#include <grade/package.hpp>
#include <grade/prepare.hpp>
#include <grade/report.hpp>
#include <grade/rubric.hpp>
#include <grade/util.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace workbook::grade;

fs::path write_rubric(const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("workbook-rubric-" + std::to_string(getpid()) +
                                                  "-" + random_hex(4) + ".json");
  std::ofstream(p) << text;
  return p;
}

TEST(PerfScale, FullWithinTheFirstTierNoneFromTheLastLinearBetween) {
  const PerfScale s{.full_within = 1.2, .zero_at = 4.0};
  EXPECT_DOUBLE_EQ(s.fraction(0.8), 1.0);
  EXPECT_DOUBLE_EQ(s.fraction(1.2), 1.0);
  EXPECT_DOUBLE_EQ(s.fraction(2.6), 0.5);  // halfway from 1.2 to 4.0
  EXPECT_DOUBLE_EQ(s.fraction(4.0), 0.0);
  EXPECT_DOUBLE_EQ(s.fraction(9.0), 0.0);
  EXPECT_DOUBLE_EQ(s.fraction(std::nan("")), 0.0);
  const PerfScale log{.full_within = 1.0, .zero_at = 4.0, .logarithmic = true};
  EXPECT_NEAR(log.fraction(2.0), 0.5, 1e-12);  // 2x is halfway from 1x to 4x on a log scale
}

TEST(Rubric, ReadsRulesDefaultsAndTiers) {
  const fs::path p = write_rubric(R"({"format": 1, "lab": "07",
    "defaults": {"visibility": "after_due_date", "skipped": "zero", "timeout_seconds": 5},
    "perf": {"full_within": 1.5, "zero_at": 3},
    "rules": [
      {"source": "hidden", "match": "*.Rejects*", "points": 1, "gate": false},
      {"source": "hidden", "match": "*", "points": 2, "gate": true},
      {"source": "visible", "match": "BinaryOps.*", "function": "add"},
      {"source": "visible", "match": "*", "visibility": "visible"},
      {"source": "perf", "match": "relu", "points": 5, "perf": {"zero_at": 6}}]})");
  const Rubric r = Rubric::load(p.string(), "07");
  fs::remove(p);
  EXPECT_EQ(r.skipped, SkipPolicy::zero);
  EXPECT_EQ(r.test_timeout_seconds, 5);
  ASSERT_NE(r.find(Source::hidden, "Relu.RejectsMismatchedSizes"), nullptr);
  EXPECT_FALSE(r.find(Source::hidden, "Relu.RejectsMismatchedSizes")->gate);
  EXPECT_TRUE(r.find(Source::hidden, "Relu.MatchesOracle")->gate);
  EXPECT_EQ(r.find(Source::hidden, "Relu.MatchesOracle")->points, 2);
  EXPECT_EQ(r.find(Source::hidden, "Relu.MatchesOracle")->visibility, "after_due_date");
  EXPECT_EQ(r.find(Source::visible, "Relu.Tail")->visibility, "visible");
  EXPECT_EQ(
      Rubric::function_of(r.find(Source::visible, "BinaryOps.X"), Source::visible, "BinaryOps.X"),
      "add");
  EXPECT_EQ(Rubric::function_of(nullptr, Source::visible, "SquaredDifference.Tail"),
            "squared_difference");
  EXPECT_EQ(r.find(Source::perf, "dot"), nullptr);
  EXPECT_EQ(r.find(Source::perf, "relu")->perf->zero_at, 6);
  EXPECT_EQ(r.find(Source::perf, "relu")->perf->full_within,
            1.5);  // the lab's tier, where the rule says nothing
}

TEST(Rubric, RefusesMistakesInsteadOfIgnoringThem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"format": 1, "rules": [], "defualts": {}})", "unknown key 'defualts'"},
      {R"({"format": 1, "rules": [{"source": "visible", "match": "*", "gate": true}]})",
       "only hidden"},
      {R"({"format": 1, "rules": [{"source": "perf", "match": "*", "perf": {"full_within": 3, "zero_at": 2}}]})",
       "full_within < zero_at"},
      {R"({"format": 1, "lab": "02", "rules": []})", "rubric of lab 02"},
      {R"({"format": 1, "rules": [{"source": "visible", "match": "*", "visibility": "secret"}]})",
       "unknown visibility"},
      {R"({"format": 1, "optional_files": ["../x.hpp"], "rules": []})", "file name patterns"},
  };
  for (const auto& [text, message] : bad) {
    const fs::path p = write_rubric(text);
    try {
      Rubric::load(p.string(), "07");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << text;
    }
    fs::remove(p);
  }
}

TEST(Rubric, DefaultGivesEveryTestAPoint) {
  const Rubric r = Rubric::default_for("05");
  EXPECT_EQ(r.find(Source::visible, "Anything.AtAll")->points, 1);
  EXPECT_EQ(r.find(Source::perf, "square")->points, 2);
  EXPECT_FALSE(r.find(Source::hidden, "X.Y")->gate);
}

TEST(Util, SplitsCommandLinesAsTheShellDoes) {
  EXPECT_THAT(split_command(R"(/usr/bin/c++ -DX="a b" -I'/p q' a\ b -o out.o)"),
              ElementsAre("/usr/bin/c++", "-DX=a b", "-I/p q", "a b", "-o", "out.o"));
  EXPECT_EQ(shell_quote("plain/path.o"), "plain/path.o");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(Util, MatchesGlobs) {
  EXPECT_TRUE(glob_match("Relu.*", "Relu.Tail"));
  EXPECT_TRUE(glob_match("*.Rejects*", "Dot.RejectsMismatchedSizes"));
  EXPECT_TRUE(glob_match("?ot", "dot"));
  EXPECT_FALSE(glob_match("Relu.*", "Relux.Tail"));
  EXPECT_FALSE(glob_match("*.hpp", "a.hpp.cpp"));
  // fnmatch(3): classes, and '*' across '/' (a rubric's paths).
  EXPECT_TRUE(glob_match("Matmul.[LP]*", "Matmul.PrimeShapes"));
  EXPECT_FALSE(glob_match("Matmul.[LP]*", "Matmul.TinyShapes"));
  EXPECT_TRUE(glob_match("labs/*.cpp", "labs/01_vectorized_relu/vector_ops.cpp"));
}

TEST(Hash, IsSha256InHex) {
  // FIPS 180-2's test vectors: a real SHA-256, not a look-alike (the cache key and the records'
  // file hashes depend on it).
  EXPECT_EQ(hash_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hash_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hash_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Bytes past a NUL count (a file's contents are hashed, not a C string).
  EXPECT_NE(hash_hex(std::string_view("a\0b", 3)), hash_hex("a"));
}

TEST(Package, ListsAndCopiesATreeWhoseBuildFolderIsASymlinkElsewhere) {
  // Clusters put build folders on scratch: `build -> /scratch/...`. The tree's paths are taken
  // as written, not resolved: resolved, `build` read as ../../scratch/build, was not skipped, and
  // copying it failed ("cannot copy symlink"), so prepare could not run on such a checkout.
  const fs::path base = fs::temp_directory_path() / ("workbook-tree-" + std::to_string(getpid()));
  fs::remove_all(base);
  fs::create_directories(base / "tree/labs");
  fs::create_directories(base / "scratch/build");
  std::ofstream(base / "tree/labs/a.cpp") << "int a;\n";
  std::ofstream(base / "scratch/build/big.o") << "object\n";
  fs::create_directory_symlink(base / "scratch/build", base / "tree/build");
  const std::vector<std::string> files = project_files(base / "tree");
  EXPECT_EQ(files, std::vector<std::string>{"labs/a.cpp"});
  copy_files(base / "tree", files, base / "copy");
  EXPECT_TRUE(fs::exists(base / "copy/labs/a.cpp"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(base / "copy/build")));
  // A git checkout: what git ignores (a scratch copy of the tree, a build folder of another name)
  // is not part of it; a new file not yet committed is (prepare refuses it unless --allow-dirty).
  const fs::path repo = base / "repo";
  write_text_atomic(repo / ".gitignore", "/scratch-copy/\n");
  write_text_atomic(repo / "labs/a.cpp", "int a;\n");
  write_text_atomic(repo / "scratch-copy/labs/a.cpp", "int b;\n");
  ASSERT_EQ(std::system(("git init -q " + shell_quote(repo.string())).c_str()), 0);
  EXPECT_EQ(project_files(repo), (std::vector<std::string>{".gitignore", "labs/a.cpp"}));
  fs::remove_all(base);
}

TEST(Prepare, AChangeToALabsFilesChangesThatLabsKeyAloneAndAnyOtherChangesEvery) {
  // The cache is per lab (prepare.hpp): a lab is built again when its own files, or those every
  // lab shares, changed; an edit to lab 03's rubric leaves labs 01 and 02 as they are.
  const fs::path base = fs::temp_directory_path() / ("workbook-keys-" + std::to_string(getpid()));
  fs::remove_all(base);
  const auto write = [&](const std::string& file, const std::string& text) {
    write_text_atomic(base / file, text);
  };
  for (const char* file :
       {"tree/common/harness.cpp", "tree/labs/01_relu/relu.cpp", "tree/labs/02_matmul/matmul.cpp",
        "tree/solutions/02_matmul/matmul.cpp", "tree/autograder/labs/03_pool/rubric.json",
        "tree/build/big.o", "overlay/labs/99_selftest/scale.cpp"})
    write(file, "first\n");
  const auto keys = [&] { return tree_keys(base / "tree", base / "overlay"); };
  const TreeKeys first = keys();
  EXPECT_EQ(first.labs.size(), 4u) << "labs 01, 02, 03 and the overlay's 99";
  const auto changed = [&](const TreeKeys& now) {
    std::vector<std::string> labs;
    for (const auto& [n, key] : now.labs)
      if (first.labs.at(n) != key) labs.push_back(n);
    return labs;
  };
  write("tree/solutions/02_matmul/matmul.cpp", "second\n");
  EXPECT_EQ(changed(keys()), std::vector<std::string>{"02"});
  EXPECT_EQ(keys().shared, first.shared);
  write("tree/solutions/02_matmul/matmul.cpp", "first\n");
  write("tree/autograder/labs/03_pool/rubric.json", "second\n");
  EXPECT_EQ(changed(keys()), std::vector<std::string>{"03"});
  write("tree/autograder/labs/03_pool/rubric.json", "first\n");
  write("overlay/labs/99_selftest/scale.cpp", "second\n");
  EXPECT_EQ(changed(keys()), std::vector<std::string>{"99"});
  write("overlay/labs/99_selftest/scale.cpp", "first\n");
  write("tree/build/big.o", "second\n");
  EXPECT_EQ(changed(keys()), std::vector<std::string>{}) << "build/ is not a source";
  write("tree/common/harness.cpp", "second\n");
  EXPECT_NE(keys().shared, first.shared);
  EXPECT_EQ(changed(keys()), (std::vector<std::string>{"01", "02", "03", "99"}));
  fs::remove_all(base);
}

TEST(Util, FindsTheFirstCompilerErrors) {
  const std::string out =
      "In file included from x.cpp:1:\nlabs/01/vector_ops.cpp: In function 'void f()':\n"
      "labs/01/vector_ops.cpp:3:5: error: 'y' was not declared\n    3 | y = 1;\n      | ^\n";
  EXPECT_EQ(first_errors(out),
            "labs/01/vector_ops.cpp: In function 'void f()':\nlabs/01/vector_ops.cpp:3:5: error: "
            "'y' was not declared\n"
            "    3 | y = 1;\n      | ^\n");
}

TEST(FirstErrors, ShowsTheLinkersOwnLinesNotOnlyCollect2) {
  const std::string missing_library =
      "/usr/bin/ld: cannot find -lcuda: No such file or directory\ncollect2: error: ld returned 1 "
      "exit status\n";
  EXPECT_EQ(first_errors(missing_library), missing_library);
  const std::string undefined =
      "/opt/gcc/bin/../lib/gcc/x86_64-linux-gnu/13/../../../x86_64-linux-gnu/bin/ld: "
      "square_test.cpp.o: in function "
      "`Square_Test::TestBody()':\nsquare_test.cpp:(.text+0x2f): undefined reference to "
      "`lab05::square(float*, long)'\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(first_errors(undefined), undefined);
  EXPECT_EQ(first_errors("noise\nld.lld: error: duplicate symbol: f\n"),
            "ld.lld: error: duplicate symbol: f\n");
  EXPECT_EQ(
      first_errors("x86_64-linux-gnu-ld.bfd: cannot open dependency file x.d\ncollect2: error: ld "
                   "returned 1\n"),
      "x86_64-linux-gnu-ld.bfd: cannot open dependency file x.d\ncollect2: error: ld returned 1\n");
  // Only collect2 said anything: that line is still shown, never nothing.
  EXPECT_EQ(first_errors("collect2: error: ld returned 1 exit status\n"),
            "collect2: error: ld returned 1 exit status\n");
  EXPECT_EQ(first_errors("-- Found Threads: TRUE\nCMake Error at labs/98/CMakeLists.txt:1 "
                         "(message):\n  libfoo is missing\n"),
            "CMake Error at labs/98/CMakeLists.txt:1 (message):\n  libfoo is missing\n");
  EXPECT_FALSE(is_linker_line("build: ok"));
  EXPECT_FALSE(is_linker_line("world: hello"));
  EXPECT_FALSE(is_linker_line("collect2: error: ld returned 1 exit status"));
}

GradeResult example_result() {
  GradeResult r;
  r.id = "alice";
  r.seed = 42;
  LabResult l;
  l.number = "01";
  l.folder = "01_vectorized_relu";
  Item pass{.lab = "01",
            .source = Source::visible,
            .test = "Relu.Tail",
            .function = "relu",
            .score = 1,
            .max_score = 1,
            .status = ItemStatus::passed};
  Item fail{.lab = "01",
            .source = Source::hidden,
            .test = "Relu.MatchesOracle",
            .function = "relu",
            .score = 0,
            .max_score = 2,
            .status = ItemStatus::failed,
            .output = "the last 3 elements were never written",
            .visibility = "after_due_date"};
  Item perf{.lab = "01",
            .source = Source::perf,
            .test = "relu",
            .function = "relu",
            .score = 2.5,
            .max_score = 5,
            .status = ItemStatus::failed,
            .output = "2.6x the reference's time"};
  perf.details = {{"ratio", 2.6}, {"fraction_of_roof", 0.35}, {"gops", 1.2},
                  {"gbs", 9.6},   {"intensity", 0.125},       {"ops_unit", "FLOP"}};
  Item gpu{.lab = "01",
           .source = Source::visible,
           .test = "Cuda.Square",
           .function = "square",
           .score = 0,
           .max_score = 0,
           .status = ItemStatus::skipped,
           .output = "Not graded: no CUDA device"};
  gpu.details["excluded"] = true;
  l.items = {pass, fail, perf, gpu};
  l.score = 3.5;
  l.max_score = 8;
  r.labs = {l};
  r.score = 3.5;
  r.max_score = 8;
  return r;
}

TEST(Outputs, GradescopeResultsHaveEveryTestWithItsVisibility) {
  const nlohmann::json j = gradescope_results(example_result());
  EXPECT_EQ(j["score"], 3.5);
  ASSERT_EQ(j["tests"].size(), 4u);
  EXPECT_EQ(j["tests"][0]["name"], "lab01 Relu.Tail");
  EXPECT_EQ(j["tests"][0]["status"], "passed");
  EXPECT_EQ(j["tests"][1]["name"], "lab01 hidden Relu.MatchesOracle");
  EXPECT_EQ(j["tests"][1]["visibility"], "after_due_date");
  EXPECT_EQ(j["tests"][1]["status"], "failed");
  EXPECT_EQ(j["tests"][2]["score"], 2.5);
  // A test not graded here says so in its name, counts 0 of 0, and claims no status.
  EXPECT_EQ(j["tests"][3]["name"], "lab01 Cuda.Square (not graded)");
  EXPECT_FALSE(j["tests"][3].contains("status"));
  EXPECT_EQ(j["output_format"], "md");
  EXPECT_THAT(j["output"].get<std::string>(), HasSubstr("| relu | 2.60x | 35% |"));
}

TEST(Outputs, RecordKeepsStatusWordsAndReadsBackTheSame) {
  // record.json, the batch's resume and the self-test's expected.json read statuses as words.
  GradeResult r = example_result();
  r.labs[0].status = LabStatus::compile_error;
  r.files = {{"labs/01_vectorized_relu/vector_ops.cpp", 123, "00ff"}};
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["labs"][0]["status"], "compile_error");
  EXPECT_EQ(j["labs"][0]["items"][0]["status"], "passed");
  EXPECT_EQ(j["labs"][0]["items"][0]["name"], "lab01 Relu.Tail");
  EXPECT_EQ(j["labs"][0]["items"][1]["source"], "hidden");
  EXPECT_EQ(j["labs"][0]["items"][3]["status"], "skipped");
  EXPECT_EQ(j["files"][0]["bytes"], 123);
  const GradeResult back = GradeResult::from_json(j);
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.labs[0].status, LabStatus::compile_error);
  EXPECT_EQ(back.labs[0].items[1].status, ItemStatus::failed);
  EXPECT_EQ(back.labs[0].items[2].source, Source::perf);
  EXPECT_STREQ(to_string(LabStatus::not_graded), "not_graded");
  EXPECT_STREQ(to_string(ItemStatus::not_run), "not_run");
}

TEST(Outputs, PrairieLearnScoreIsAFractionAndHiddenOutputsAreWithheld) {
  const nlohmann::json j = prairielearn_results(example_result());
  EXPECT_TRUE(j["gradable"].get<bool>());
  EXPECT_DOUBLE_EQ(j["score"].get<double>(), 3.5 / 8);
  EXPECT_EQ(j["tests"][1]["max_points"], 2);
  EXPECT_FALSE(j["tests"][1].contains("output"));
  EXPECT_EQ(j["tests"][0]["points"], 1);
  EXPECT_FALSE(j.contains("format_errors"));
}

TEST(Outputs, PrairieLearnChargesNoAttemptForASubmissionThatDoesNotBuild) {
  GradeResult r = example_result();
  r.labs[0].status = LabStatus::compile_error;
  r.labs[0].notes = {"labs/01_vectorized_relu/vector_ops.cpp does not compile"};
  const nlohmann::json j = prairielearn_results(r);
  EXPECT_FALSE(j["gradable"].get<bool>());
  ASSERT_EQ(j["format_errors"].size(), 1u);
  EXPECT_THAT(j["format_errors"][0].get<std::string>(), HasSubstr("lab 01: compile_error"));
  EXPECT_THAT(j["message"].get<std::string>(), HasSubstr("does not compile"));
}

TEST(Outputs, CsvRowsQuoteWhatNeedsQuoting) {
  GradeResult r = example_result();
  r.id = "o'brien, pat";
  const std::string line = csv_line(csv_row(r, {"01", "02"}));
  EXPECT_EQ(line.rfind("\"o'brien, pat\",3.50,8.00,43.8,3.50,8.00,graded,,,not graded,", 0), 0u)
      << line;
  EXPECT_EQ(csv_line(csv_header({"01"})),
            "id,score,max_score,percent,lab01,lab01_max,lab01_status,flags,seconds,graded_at,seed,"
            "files\n");
}

TEST(Outputs, ReportsShowScoresAndWithholdHiddenDetails) {
  const GradeResult r = example_result();
  const std::string md = markdown_report(r);
  EXPECT_THAT(md, HasSubstr("## Score: 3.50 / 8"));
  EXPECT_THAT(md, HasSubstr("| lab01 hidden Relu.MatchesOracle | 0 / 2 | failed |"));
  EXPECT_THAT(md, HasSubstr("(details are shown after the due date)"));
  EXPECT_THAT(md, Not(HasSubstr("never written")));
  const std::string html = html_report(r);
  EXPECT_THAT(html, HasSubstr("<td>not graded</td>"));
  EXPECT_EQ(GradeResult::from_json(r.to_json()).to_json(), r.to_json())
      << "the record reads back as it was written";
}

// --- Any bytes in, valid text out ---------------------------------------------------------------

TEST(ValidText, ReplacesBytesThatAreNotUtf8AndEscapesControlCharacters) {
  EXPECT_EQ(valid_text("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80")
      << "valid UTF-8 is kept";
  EXPECT_EQ(valid_text("a\xff"
                       "b\xc3(c"),
            "a\xef\xbf\xbd"
            "b\xef\xbf\xbd(c");
  EXPECT_EQ(valid_text("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd")
      << "a surrogate is not UTF-8";
  EXPECT_EQ(valid_text("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd") << "nor an overlong form";
  EXPECT_EQ(valid_text("\x1b[2Jline\r\n\tnul:" + std::string(1, '\0')),
            "\\x1b[2Jline\\x0d\n\tnul:\\x00");
}

TEST(ValidText, EveryOutputFileIsWrittenWhateverBytesItHolds) {
  GradeResult r = example_result();
  r.id = "bad\xffname";
  r.labs[0].build_output = "error: \xfe\xfe ``` closes no fence of ours";
  r.labs[0].items[1].visibility = "visible";
  r.labs[0].items[1].output =
      "## Score: 100 / 100\n![tracker](https://example.invalid/p.png)\n[click](javascript:alert(1))"
      "\n<img src=x onerror=alert(1)>\n\x1b]0;owned\x07\xff\n```\nfenced ## Score\n```\nafter "
      "`code [kept]` and a lone ` [link](x)";
  const fs::path out = fs::temp_directory_path() / ("workbook-outputs-" + std::to_string(getpid()));
  GradeOptions o;
  o.out = out;
  ASSERT_NO_THROW(write_outputs(r, o)) << "nlohmann's type_error.316 on bytes that are not UTF-8";
  for (const char* file : {"record.json", "results.json", "prairielearn.json"})
    EXPECT_NO_THROW(read_json(out / file)) << file;
  std::vector<std::string> markdown = {read_text(out / "report.md")};
  for (const nlohmann::json& t : read_json(out / "results.json").at("tests"))
    markdown.push_back(t.value("output", ""));
  markdown.push_back(read_json(out / "results.json").value("output", ""));
  for (const std::string& md : markdown) {
    EXPECT_THAT(md, Not(HasSubstr("\n## Score: 100 / 100"))) << md;
    EXPECT_THAT(md, Not(HasSubstr("![tracker]"))) << md;
    EXPECT_THAT(md, Not(HasSubstr("[click](javascript:"))) << md;
    EXPECT_THAT(md, Not(HasSubstr("<img"))) << md;
    EXPECT_THAT(md, Not(HasSubstr("\x1b"))) << md;
    EXPECT_THAT(md, Not(HasSubstr("\xff"))) << md;
    EXPECT_THAT(md, Not(HasSubstr("[link](x)"))) << "a lone backtick opens no code span: " << md;
  }
  const std::string md = read_text(out / "report.md");
  EXPECT_THAT(md, HasSubstr("\\## Score: 100 / 100")) << "shown as text, not dropped";
  EXPECT_THAT(md, HasSubstr("fenced ## Score")) << "a code block of the output stays as it is";
  EXPECT_THAT(md, HasSubstr("`code [kept]`")) << "inline code stays as it is";
  EXPECT_THAT(md, HasSubstr("''' closes no fence of ours")) << "a compiler's message, fenced";
  EXPECT_THAT(read_text(out / "report.html"), Not(HasSubstr("<img")));
  fs::remove_all(out);
}

}  // namespace
