#pragma once
// The grader's pipeline, shared by its stages (intake, build, audit, run, perf, score): the
// workspace of one submission, the context every stage receives, and the helpers that turn what
// the sandbox says into what the student reads. Private to the grader (not an installed header).
#include <grade/options.hpp>
#include <grade/prepare.hpp>
#include <grade/rubric.hpp>
#include <grade/sandbox.hpp>
#include <grade/util.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <stdexcept>
#include <string>

#include <sys/mount.h>
#include <sys/types.h>
#include <unistd.h>

namespace workbook::grade {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string fixed(double v, int digits = 2);

// --- The workspace
// ----------------------------------------------------------------------------------

// W/src    the student's whitelisted files (readable by the sandbox)
// W/obj    compiled objects, W/bin linked executables (written by the sandbox user)
// W/tmp    working folder of every sandboxed run
// W/jail   mount point of the jail
// W/private  the grader's: channels, specs, perf records (root only)
struct Workspace {
  fs::path root;
  uid_t uid = 0;
  bool keep = false;

  fs::path src() const { return root / "src"; }
  fs::path obj(const std::string& lab) const { return root / "obj" / lab; }
  fs::path bin(const std::string& lab) const { return root / "bin" / lab; }
  fs::path tmp() const { return root / "tmp"; }
  fs::path jail() const { return root / "jail"; }
  fs::path priv() const { return root / "private"; }

  bool mounted = false;  // a size-limited tmpfs: the grade's files under a quota

  /// quota_bytes > 0: the workspace is a tmpfs of that size (as root, where isolation() found
  /// that it can be; failing then is an EnvironmentError, never a workspace without a quota).
  Workspace(const fs::path& work, int slot, bool keep_it, std::uint64_t quota_bytes = 0)
      : keep(keep_it) {
    fs::create_directories(work);
    if (geteuid() == 0)
      fs::permissions(work, fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
    // A name nobody can guess: the work folder is traversable, not listable.
    root = work / ("grade-" + random_hex(8));
    fs::create_directories(root);
    if (quota_bytes > 0) {
      const std::string options = "size=" + std::to_string(quota_bytes) + ",mode=0711";
      if (mount("workbook-work", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
        throw EnvironmentError("cannot mount the work folder's tmpfs (its quota) on " +
                               root.string() + ": " + std::strerror(errno));
      mounted = true;
    }
    fs::permissions(root, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    uid = sandbox_uid_base() + static_cast<uid_t>(slot);
    for (const fs::path& d : {src(), root / "obj", root / "bin", tmp(), jail(), priv()})
      fs::create_directories(d);
    fs::permissions(priv(), fs::perms::owner_all);
    fs::permissions(src(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    for (const fs::path& d : {root / "obj", root / "bin", tmp()}) give(d);
  }
  ~Workspace() {
    if (keep) return;  // a tmpfs stays mounted, for inspection: umount it when done
    std::error_code ec;
    if (mounted) {
      umount2(root.c_str(), MNT_DETACH);
      fs::remove(root, ec);
      return;
    }
    fs::remove_all(root, ec);
  }
  // A folder the sandbox user writes.
  void give(const fs::path& d) const {
    fs::create_directories(d);
    if (geteuid() == 0) {
      if (chown(d.c_str(), uid, static_cast<gid_t>(uid)) != 0)
        throw std::runtime_error("chown " + d.string() + ": " + std::strerror(errno));
      fs::permissions(d, fs::perms::owner_all);
    } else {
      fs::permissions(d, fs::perms::owner_all);
    }
  }
};

// Paths as the student sees them: "labs/01_x/vector_ops.cpp", not the workspace's or the cache's.
std::string student_paths(std::string text, const Workspace& w, const Cache& cache);
// At most `max` characters, saying how many more there were.
std::string cut(const std::string& text, std::size_t max);
// A Markdown code block that the text cannot close early.
std::string fenced(const std::string& text);

// --- The sandbox specs of each step
// -----------------------------------------------------------------

struct Context {
  const GradeOptions& options;
  const Cache& cache;
  Workspace& ws;
  std::ostream& log;
  std::uint64_t seed;
  bool parallel_ok = true;
  std::string cgroup;  // the grade's (GradeScope), for every sandboxed run of it
};

/// A lock that lets timing run alone: shared while compiling and testing, exclusive while timing
/// (with writer preference, so timing is not starved by a stream of other jobs). The exclusive wait
/// is bounded (kPhaseWaitSeconds): a slow submission elsewhere delays other grades' timing by that
/// much at most, never by its whole budget; the timing then goes ahead, not alone (alone() says).
class PhaseLock {
 public:
  static constexpr double kPhaseWaitSeconds = 120;
  PhaseLock(const fs::path& cache, bool exclusive);
  ~PhaseLock();
  PhaseLock(const PhaseLock&) = delete;
  PhaseLock& operator=(const PhaseLock&) = delete;
  bool alone() const { return alone_; }

 private:
  int gate_ = -1, lock_ = -1;
  bool alone_ = false;
};

// The limits, environment and mounts every sandboxed step of a lab starts from.
SandboxSpec base_spec(const Context& c, const Rubric& rubric, double wall);

}  // namespace workbook::grade
