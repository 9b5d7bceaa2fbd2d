// The sandbox against hostile programs: endless loops, fork bombs, floods of output, huge files and
// allocations, daemons that escape their process group, reads of secrets, the network. Each layer
// that this machine cannot apply (no root, no namespaces) is skipped with the reason; the limits
// that always apply are always tested.
#include <grade/cgroup.hpp>
#include <grade/gpu_access.hpp>
#include <grade/sandbox.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace workbook::grade;
namespace fs = std::filesystem;

// A copy of the hostile program in a folder of its own that every user can reach: the build folder
// may be under a folder only root can enter (a clone in /root or in `mktemp -d`), and a program run
// without a jail runs from where it lies, as the sandbox user. Removed with the object.
class ReachableProgram {
 public:
  ReachableProgram() {
    std::string name = (fs::temp_directory_path() / "workbook-reachable-XXXXXX").string();
    if (!mkdtemp(name.data())) throw std::runtime_error("mkdtemp: " + std::string(strerror(errno)));
    dir_ = name;
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    path_ = dir_ / fs::path(WORKBOOK_HOSTILE_PROGRAM).filename();
    fs::copy_file(WORKBOOK_HOSTILE_PROGRAM, path_, fs::copy_options::overwrite_existing);
    fs::permissions(path_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
  }
  ~ReachableProgram() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  ReachableProgram(const ReachableProgram&) = delete;
  ReachableProgram& operator=(const ReachableProgram&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path dir_, path_;
};

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("workbook-sandbox-test-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir / "jail");
    fs::create_directories(dir / "work");
    fs::permissions(dir, fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
    fs::permissions(dir / "work", fs::perms::all);
  }
  void TearDown() override { fs::remove_all(dir); }

  const ReachableProgram program;

  SandboxSpec spec(std::vector<std::string> args) {
    SandboxSpec s;
    s.argv = {program.path().string()};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.env = clean_environment({"MARKER=1"});
    s.cwd = (dir / "work").string();
    s.jail_dir = (dir / "jail").string();
    s.mounts = {{program.path().parent_path().string(), false}, {(dir / "work").string(), true}};
    s.slot = 7;  // a user of its own, away from the grading slots a self-test may use
    s.limits.wall_seconds = 5;
    return s;
  }
  // Processes still running whose command line holds `marker` (anywhere on the machine); `end`
  // kills them (a test must not leave a process behind, whatever it found).
  static int survivors(const std::string& marker, bool end = false) {
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(e.path() / "cmdline");
      std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (cmdline.find(marker) == std::string::npos) continue;
      ++n;
      if (end) kill(std::stoi(name), SIGKILL);
    }
    return n;
  }

  fs::path dir;
};

TEST_F(Sandbox, RunsAProgramAndReportsItsExit) {
  const RunResult r = run_sandboxed(spec({"alloc", "1"}));
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  EXPECT_THAT(r.output, HasSubstr("allocated 1 MiB"));
  const RunResult bad = run_sandboxed(spec({"no-such-command"}));
  EXPECT_TRUE(bad.exited);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.describe(), "exit code 2");
}

TEST_F(Sandbox, GivesOnlyTheEnvironmentItIsTold) {
  setenv("WORKBOOK_GRADER_SECRET", "s3cret", 1);
  const RunResult r = run_sandboxed(spec({"identity"}));
  unsetenv("WORKBOOK_GRADER_SECRET");
  EXPECT_THAT(r.output, HasSubstr("env MARKER=1"));
  EXPECT_THAT(r.output, HasSubstr("env HOME=/tmp"));
  EXPECT_THAT(r.output, Not(HasSubstr("s3cret")));
  EXPECT_THAT(r.output, HasSubstr("nnp 1"))
      << "no_new_privs: a setuid program cannot raise privileges";
}

TEST_F(Sandbox, RunsAsAnUnprivilegedUserWhenTheGraderIsRoot) {
  if (geteuid() != 0)
    GTEST_SKIP()
        << "the grader does not run as root here: the program runs as the grader's own user";
  const RunResult r = run_sandboxed(spec({"identity"}));
  EXPECT_THAT(r.output, HasSubstr("uid " + std::to_string(sandbox_uid_base() + 7) + " euid " +
                                  std::to_string(sandbox_uid_base() + 7)));
  EXPECT_THAT(r.output, HasSubstr("CapEff:\t0000000000000000"));
}

TEST_F(Sandbox, WritesFilesAsTheSandboxUserWhenTheGraderIsRoot) {
  // The user must be the program's identity on the host, not only inside a user namespace (as
  // bwrap --uid gives it): what it writes belongs to that user, and the grader's files stay out of
  // reach.
  if (geteuid() != 0)
    GTEST_SKIP()
        << "the grader does not run as root here: the program runs as the grader's own user";
  const RunResult r = run_sandboxed(spec({"write-file", (dir / "work" / "written").string(), "1"}));
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  struct stat s {};
  ASSERT_EQ(stat((dir / "work" / "written").c_str(), &s), 0);
  EXPECT_EQ(s.st_uid, sandbox_uid_base() + 7);
  EXPECT_EQ(s.st_gid, sandbox_uid_base() + 7);
}

TEST_F(Sandbox, TellsAnExitCodeFromADeathBySignal) {
  // 153 is what a shell reports for a death by SIGXFSZ (128 + 25): the feedback must not confuse
  // them.
  const RunResult code = run_sandboxed(spec({"exit", "153"}));
  EXPECT_TRUE(code.exited);
  EXPECT_EQ(code.code, 153);
  EXPECT_EQ(code.signal, 0);
  EXPECT_EQ(code.describe(), "exit code 153");
}

TEST_F(Sandbox, StopsAnEndlessLoopAtTheWallClockLimit) {
  SandboxSpec s = spec({"spin"});
  s.limits.wall_seconds = 1;
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.timed_out) << r.describe();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 4.0);
  EXPECT_THAT(r.describe(), HasSubstr("timed out after"));
}

TEST_F(Sandbox, StopsAnEndlessLoopAtTheCpuLimit) {
  SandboxSpec s = spec({"spin"});
  s.limits.cpu_seconds = 1;
  s.limits.wall_seconds = 10;
  const RunResult r = run_sandboxed(s);
  EXPECT_FALSE(r.exited);
  EXPECT_TRUE(r.signal == SIGXCPU || r.signal == SIGKILL) << r.describe();
}

TEST_F(Sandbox, EndsADaemonThatLeftItsProcessGroup) {
  const std::string marker = "workbook-daemon-" + std::to_string(getpid());
  SandboxSpec s = spec({"daemon", marker});
  s.limits.wall_seconds = 1;
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.timed_out);
  usleep(200000);
  const bool can_end_it = isolation().pid_namespace || geteuid() == 0;
  const int left = survivors(marker, true);
  if (!can_end_it)
    GTEST_SKIP()
        << "without a pid namespace or root, a process that leaves its group survives (documented)";
  EXPECT_EQ(left, 0) << "a process started in the sandbox outlived it";
}

TEST_F(Sandbox, ContainsAForkBomb) {
  SandboxSpec s = spec({"fork-bomb"});
  s.limits.processes = 32;
  s.limits.wall_seconds = 2;
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run_sandboxed(s);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 6.0);
  usleep(200000);
  // The machine still forks: the bomb held only its own user's slots, and is gone.
  const RunResult after = run_sandboxed(spec({"alloc", "1"}));
  EXPECT_TRUE(after.ok()) << after.describe();
}

TEST_F(Sandbox, KeepsTheHeadOfALongOutput) {
  SandboxSpec s = spec({"print", "8"});
  s.limits.output_keep_bytes = 4096;
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.output.size(), 4096u);
  EXPECT_EQ(r.output_bytes, 8u << 20);
  EXPECT_THAT(r.output_with_note(), HasSubstr("more bytes of output not kept"));
}

TEST_F(Sandbox, StopsAnOutputFlood) {
  SandboxSpec s = spec({"print-forever"});
  s.limits.output_kill_bytes = 4 << 20;
  s.limits.wall_seconds = 20;
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.output_flood) << r.describe();
  EXPECT_LT(r.wall_seconds, 10.0);
  EXPECT_THAT(r.describe(), HasSubstr("MiB of output"));
}

TEST_F(Sandbox, LimitsFileSize) {
  SandboxSpec s = spec({"write-file", (dir / "work" / "big").string(), "8"});
  s.limits.file_bytes = 1 << 20;
  const RunResult r = run_sandboxed(s);
  EXPECT_EQ(r.signal, SIGXFSZ) << r.describe();
  EXPECT_LE(fs::file_size(dir / "work" / "big"), 1u << 20);
}

TEST_F(Sandbox, LimitsMemory) {
  SandboxSpec s = spec({"alloc", "512"});
  s.limits.memory_bytes = 256ull << 20;
  const RunResult r = run_sandboxed(s);
  EXPECT_THAT(r.output, HasSubstr("bad_alloc")) << r.describe();
}

TEST_F(Sandbox, GpuRunsMayReserveAddressSpaceButAllocateNoMoreThanTheLimit) {
  // The CUDA driver reserves address space for the whole GPU at start: RLIMIT_AS would stop it, so
  // a GPU run is limited by what it really allocates (RLIMIT_DATA), and the limit still holds.
  SandboxSpec plain = spec({"reserve", "64"});
  plain.limits.memory_bytes = 256ull << 20;
  EXPECT_THAT(run_sandboxed(plain).output, HasSubstr("cannot reserve"));
  SandboxSpec gpu = plain;
  gpu.gpu = true;
  const RunResult reserved = run_sandboxed(gpu);
  EXPECT_TRUE(reserved.ok()) << reserved.describe() << "\n" << reserved.output;
  EXPECT_THAT(reserved.output, HasSubstr("reserved 64 GiB"));
  SandboxSpec hungry = spec({"alloc", "512"});
  hungry.limits.memory_bytes = 256ull << 20;
  hungry.gpu = true;
  EXPECT_THAT(run_sandboxed(hungry).output, HasSubstr("bad_alloc"));
}

TEST_F(Sandbox, ShowsWhatIsMountedBelowAMountedFolderReadOnly) {
  // Driver libraries are often a mount of their own below a system folder (a container toolkit's
  // single-file binds, /usr/local/nvidia): the jail shows them, read-only like their folder.
  if (!isolation().mount_namespace || geteuid() != 0)
    GTEST_SKIP() << "needs root and a mount namespace (a jail)";
  fs::create_directories(dir / "tree" / "driver");
  fs::permissions(dir / "tree", fs::perms::all);
  if (mount("workbook-test", (dir / "tree" / "driver").c_str(), "tmpfs", 0, "mode=0777,size=1m") !=
      0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  std::ofstream(dir / "tree" / "driver" / "libcuda.so.1") << "a driver library";
  fs::permissions(dir / "tree" / "driver" / "libcuda.so.1", fs::perms::all);
  SandboxSpec read = spec({"read-file", (dir / "tree" / "driver" / "libcuda.so.1").string()});
  read.mounts.push_back({(dir / "tree").string(), false});
  const RunResult shown = run_sandboxed(read);
  SandboxSpec write = spec({"write-file", (dir / "tree" / "driver" / "planted"), "1"});
  write.mounts.push_back({(dir / "tree").string(), false});
  const RunResult planted = run_sandboxed(write);
  const bool written = fs::exists(dir / "tree" / "driver" / "planted");
  umount2((dir / "tree" / "driver").c_str(), MNT_DETACH);
  EXPECT_THAT(shown.output, HasSubstr("read: a driver library")) << shown.describe();
  EXPECT_FALSE(planted.ok()) << "a mount below a read-only folder must be read-only too";
  EXPECT_FALSE(written);
}

TEST(GpuAccess, FindsTheDriversLibrariesInTheLoadersCache) {
  const std::string listing =
      "1234 libs found in cache `/etc/ld.so.cache'\n"
      "\tlibnvidia-ptxjitcompiler.so.1 (libc6,x86-64) => "
      "/usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.1\n"
      "\tlibcupti.so.13 (libc6,x86-64) => /usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13\n"
      "\tlibcudart.so.13 (libc6,x86-64) => "
      "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13\n"
      "\tlibcuda.so.1 (libc6,x86-64) => /run/nvidia/driver/lib64/libcuda.so.1\n"
      "\tlibcuda.so.1 (libc6,x86-64) => /run/nvidia/driver/lib64/libcuda.so.1\n"
      "\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6\n";
  EXPECT_THAT(driver_libraries(listing),
              ::testing::ElementsAre("/usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.1",
                                     "/run/nvidia/driver/lib64/libcuda.so.1"));
  EXPECT_TRUE(under_system_folder("/usr/local/nvidia/lib64"));
  EXPECT_TRUE(under_system_folder("/opt"));
  EXPECT_FALSE(under_system_folder("/run/nvidia/driver/lib64"));
  EXPECT_FALSE(under_system_folder("/optional"));
  EXPECT_FALSE(under_system_folder("/usrlocal"));
}

TEST_F(Sandbox, GivesAGpuRunTheDeviceNodesFoundOnThisMachineOnly) {
  if (!isolation().mount_namespace)
    GTEST_SKIP() << "no mount namespace on this machine: no jail (documented)";
  const GpuAccess& gpu = gpu_access();
  SandboxSpec cpu = spec({"read-file", "/proc/self/mounts"});
  cpu.limits.output_keep_bytes = 1 << 20;
  const RunResult plain = run_sandboxed(cpu);
  EXPECT_THAT(plain.output, Not(HasSubstr("/dev/nvidia"))) << "a CPU run sees no GPU device";
  SandboxSpec with_gpu = cpu;
  with_gpu.gpu = true;
  const RunResult r = run_sandboxed(with_gpu);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  for (const std::string& node : gpu.devices) {
    EXPECT_THAT(r.output, HasSubstr(" " + node + " ")) << node << " missing in the jail";
  }
  if (gpu.devices.empty()) {
    EXPECT_THAT(r.output, Not(HasSubstr("/dev/nvidia")));
  }
}

TEST_F(Sandbox, HasNoNetwork) {
  if (!isolation().net_namespace)
    GTEST_SKIP()
        << "no network namespace on this machine (documented: the program can reach the network)";
  // A server of the grader's on loopback: the sandbox has a loopback of its own, down, and no route
  // out.
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t length = sizeof a;
  getsockname(server, reinterpret_cast<sockaddr*>(&a), &length);
  listen(server, 1);
  const RunResult local =
      run_sandboxed(spec({"connect", "127.0.0.1", std::to_string(ntohs(a.sin_port))}));
  const RunResult outside = run_sandboxed(spec({"connect", "1.1.1.1", "53"}));
  close(server);
  EXPECT_THAT(local.output, HasSubstr("no connection")) << local.output;
  EXPECT_THAT(outside.output, HasSubstr("no connection")) << outside.output;
}

TEST_F(Sandbox, ShowsOnlyWhatTheJailHolds) {
  if (!isolation().mount_namespace)
    GTEST_SKIP() << "no mount namespace on this machine: no jail (documented)";
  std::ofstream(dir / "secret.txt") << "the reference solution";
  fs::permissions(dir / "secret.txt",
                  fs::perms::all);  // readable by anyone: only the jail hides it
  const RunResult hidden = run_sandboxed(spec({"read-file", (dir / "secret.txt").string()}));
  EXPECT_THAT(hidden.output, HasSubstr("cannot read")) << hidden.output;
  std::ofstream(dir / "work" / "visible.txt") << "a mounted file";
  fs::permissions(dir / "work" / "visible.txt", fs::perms::all);
  const RunResult shown =
      run_sandboxed(spec({"read-file", (dir / "work" / "visible.txt").string()}));
  EXPECT_THAT(shown.output, HasSubstr("read: a mounted file")) << shown.describe();
  const RunResult system = run_sandboxed(spec({"write-file", "/usr/workbook-sandbox-test", "1"}));
  EXPECT_FALSE(system.ok()) << "the system folders are read-only";
  EXPECT_FALSE(fs::exists("/usr/workbook-sandbox-test"));
}

TEST_F(Sandbox, CannotReadTheGradersFilesWhenRoot) {
  if (geteuid() != 0)
    GTEST_SKIP() << "the grader does not run as root here: no user separation (documented)";
  // Inside a mounted folder, so that only the permissions stand between the program and the file.
  std::ofstream(dir / "work" / "rubric.json") << "{}";
  fs::permissions(dir / "work" / "rubric.json", fs::perms::owner_read | fs::perms::owner_write);
  const RunResult r = run_sandboxed(spec({"read-file", (dir / "work" / "rubric.json").string()}));
  EXPECT_THAT(r.output, HasSubstr("cannot read: Permission denied")) << r.output;
}

TEST_F(Sandbox, HandsOverOnlyTheDescriptorsItIsGiven) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  const int stray = open("/dev/null", O_RDONLY);  // not close-on-exec: must still not leak
  SandboxSpec s = spec({"write-fd", "3", "through the channel"});
  s.pass_fds = {p[1]};
  const RunResult r = run_sandboxed(s);
  EXPECT_TRUE(r.ok()) << r.describe() << r.output;
  char buffer[64] = {};
  ASSERT_GT(read(p[0], buffer, sizeof buffer - 1), 0);
  EXPECT_STREQ(buffer, "through the channel\n");
  close(p[0]);
  const RunResult leak = run_sandboxed(spec({"write-fd", std::to_string(stray), "x"}));
  EXPECT_EQ(leak.code, 7) << "descriptor " << stray << " of the grader reached the program";
  close(stray);
}

TEST_F(Sandbox, ReportsAProgramThatCannotStart) {
  SandboxSpec s = spec({});
  s.argv = {"/nonexistent/program"};
  const RunResult r = run_sandboxed(s);
  EXPECT_FALSE(r.started);
  EXPECT_THAT(r.describe(), HasSubstr("could not start"));
}

// Whether this process may create a user namespace (tried in a child, which then ends).
bool user_namespaces_allowed() {
  const pid_t child = fork();
  if (child == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The child of RunsWithoutNamespacesWhereTheJailCannotBeBuilt: masks `masked`, becomes nobody, and
// exits 0 when a sandboxed run of `program` works and isolation() explains why it had no jail.
[[noreturn]] void run_where_proc_is_masked(const char* masked, const fs::path& program) {
  if (unshare(CLONE_NEWNS) != 0 ||
      mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      mount("/dev/null", masked, nullptr, MS_BIND, nullptr) != 0 || setgroups(0, nullptr) != 0 ||
      setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0 ||
      prctl(PR_SET_DUMPABLE, 1) !=
          0) {  // as a grader started as that user is (else /proc/self is root's)
    std::fprintf(stderr, "setup: %s\n", std::strerror(errno));
    _exit(1);
  }
  const Isolation& i = isolation();
  const bool noted = i.to_json().dump().find("the jail cannot be built") != std::string::npos;
  char jail[] = "/tmp/workbook-masked-proc-XXXXXX";
  if (!mkdtemp(jail)) _exit(1);
  SandboxSpec spec;
  spec.argv = {program.string(), "alloc", "1"};
  spec.env = clean_environment();
  spec.jail_dir = jail;
  spec.mounts = {{program.parent_path().string(), false}};
  const RunResult r = run_sandboxed(spec);
  rmdir(jail);
  std::fprintf(stderr, "run: %s; jail %d; noted %d\n%s\n", r.describe().c_str(), i.mount_namespace,
               noted, i.to_json().dump().c_str());
  const bool explained = noted || !user_namespaces_allowed();
  _exit(r.ok() && r.output.find("allocated 1 MiB") != std::string::npos && !i.mount_namespace &&
                explained
            ? 0
            : 1);
}

// A container that masks parts of /proc (Docker's and Podman's defaults) lets an unprivileged user
// make namespaces but not mount a new /proc in them, so the jail cannot be built there (bwrap fails
// the same way: "Can't mount proc"). The sandbox must still run programs, without namespaces and
// saying so, rather than fail every run.
TEST(Isolation, RunsWithoutNamespacesWhereTheJailCannotBeBuilt) {
  const char* masked = nullptr;
  for (const char* path : {"/proc/keys", "/proc/timer_list", "/proc/kcore"})
    if (access(path, F_OK) == 0) masked = path;
  if (geteuid() != 0 || !masked)
    GTEST_SKIP() << "needs root (to mask /proc and become another user) and /proc/keys";
  const pid_t probe = fork();
  if (probe == 0) _exit(unshare(CLONE_NEWNS) == 0 ? 0 : 1);
  int status = 0;
  waitpid(probe, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    GTEST_SKIP() << "cannot make a mount namespace here";
  GTEST_FLAG_SET(death_test_style,
                 "threadsafe");  // a fresh process, in which isolation() probes again
  const ReachableProgram program;
  EXPECT_EXIT(run_where_proc_is_masked(masked, program.path()), ::testing::ExitedWithCode(0),
              "run: exit code 0; jail 0");
}

TEST(Isolation, ReportsWhatItCannotDo) {
  const Isolation& i = isolation();
  EXPECT_EQ(i.complete(), i.notes.empty()) << i.to_json().dump(2);
}

// --- Every layer or none: cgroups, no silent fallback, a killed grader --------------------------

TEST_F(Sandbox, RunsInACgroupOfItsOwnInsideTheGrades) {
  if (cgroup_support().version == 0) GTEST_SKIP() << "no cgroup here: " << cgroup_support().note;
  GradeScope scope(GradeLimits{});
  SandboxSpec s = spec({});
  s.argv = {"/bin/cat", "/proc/self/cgroup"};
  s.cgroup = scope.cgroup();
  const RunResult r = run_sandboxed(s);
  ASSERT_TRUE(r.ok()) << r.describe() << r.output;
  EXPECT_THAT(r.output, HasSubstr("/workbook/" + scope.cgroup() + "/run-"));
  EXPECT_TRUE(cgroup_members(scope.cgroup()).empty()) << "the run's cgroup is gone with it";
}

TEST_F(Sandbox, AGradesMemoryIsSharedByAllItsProcesses) {
  if (cgroup_support().version == 0) GTEST_SKIP() << "no cgroup here: " << cgroup_support().note;
  GradeLimits limits;
  limits.memory_bytes = 96ull << 20;
  GradeScope scope(limits);
  SandboxSpec s = spec({"alloc", "256"});  // well within its own address-space limit (4 GiB)
  s.cgroup = scope.cgroup();
  const RunResult r = run_sandboxed(s);
  EXPECT_FALSE(r.ok()) << "256 MiB touched in a grade of 96 MiB: " << r.describe() << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("allocated")));
}

// A process of ours that plays the grader: a grade's cgroup, an isolated run whose daemon leaves
// its group (no pid namespace: WORKBOOK_GRADE_NAMESPACES=0), and a trusted tool's child (isolate =
// false, as the hidden-test checker runs); then it waits to be killed.
[[noreturn]] void grader_to_kill(SandboxSpec daemon, const std::string& tool_marker) {
  setenv("WORKBOOK_GRADE_NAMESPACES", "0", 1);
  GradeScope scope(GradeLimits{});
  daemon.cgroup = scope.cgroup();
  SandboxProcess run(daemon);
  SandboxSpec tool;
  tool.argv = {"/bin/sleep", tool_marker};
  tool.env = clean_environment();
  tool.isolate = false;
  tool.limits.wall_seconds = 600;
  SandboxProcess trusted(tool);
  for (;;) pause();
}

TEST_F(Sandbox, AKilledGraderLeavesNoProcessBehind) {
  const std::string marker = "workbook-orphan-" + std::to_string(getpid());
  const std::string tool_marker = "7777." + std::to_string(getpid());  // sleep's seconds
  SandboxSpec s = spec({"daemon", marker});
  s.limits.wall_seconds = 600;
  const pid_t grader = fork();
  if (grader == 0) grader_to_kill(s, tool_marker);
  auto both = [&] { return survivors(marker) + survivors(tool_marker); };
  for (int i = 0; i < 300 && both() < 3; ++i) usleep(10000);  // the daemon, its child, the tool
  const int started = both();
  kill(grader, SIGKILL);
  waitpid(grader, nullptr, 0);
  int left = both();
  for (int i = 0; i < 300 && left > 0; ++i, left = both()) usleep(10000);
  survivors(marker, true);
  survivors(tool_marker, true);
  EXPECT_EQ(started, 3) << "the run and the tool did not start";
  if (cgroup_support().version == 0 && left > 0)
    GTEST_SKIP() << "no cgroup here (" << cgroup_support().note
                 << "): a daemon that left its group outlives a killed grader (documented)";
  EXPECT_EQ(left, 0) << "processes outlived the grader that started them";
}

TEST_F(Sandbox, ARunThatCannotGetItsNamespacesIsTheMachinesErrorNotARunWithout) {
  if (!isolation().pid_namespace)
    GTEST_SKIP() << "no namespaces here: none is required (doctor says so)";
  const pid_t child = fork();
  if (child == 0) {
    // unshare fails from now on in this process and its children, as when a namespace limit is
    // reached: the run must not go ahead with fewer namespaces.
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
      _exit(3);
    try {
      const RunResult r = run_sandboxed(spec({"identity"}));
      std::fprintf(stderr, "ran anyway: %s\n%s", r.describe().c_str(), r.output.c_str());
      _exit(1);
    } catch (const EnvironmentError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      _exit(std::string(e.what()).find("isolation") != std::string::npos ? 0 : 2);
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "cannot install a seccomp filter here";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: the run went ahead with fewer namespaces; 2: the error does not name isolation";
}

}  // namespace
