// What a CUDA program needs in the jail, found on this machine: device nodes, driver libraries,
// toolkit, environment. See gpu_access.hpp.
#include <grade/gpu_access.hpp>

#include <grade/util.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::grade {
namespace {

namespace fs = std::filesystem;

void add_unique(std::vector<std::string>& list, const std::string& item) {
  if (!item.empty() && std::find(list.begin(), list.end(), item) == list.end())
    list.push_back(item);
}

// The folder of a file, and the folder of what it links to: both must be visible for the loader
// to follow the link (a container toolkit often mounts libcuda.so.1 -> libcuda.so.580.x).
void add_folders_of(const std::string& file, std::vector<std::string>& folders) {
  std::error_code ec;
  for (const fs::path& p : {fs::path(file), fs::canonical(file, ec)}) {
    if (p.empty() || !p.has_parent_path()) continue;
    const std::string folder = p.parent_path().string();
    if (!under_system_folder(folder)) add_unique(folders, folder);
  }
}

std::string ldconfig_listing() {
  for (const char* ldconfig :
       {"/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig", "/bin/ldconfig"}) {
    if (access(ldconfig, X_OK) != 0) continue;
    const ToolOutput r = run_tool({ldconfig, "-p"});
    if (r.exit_code == 0) return r.output;
  }
  return "";
}

// nvcc's toolkit: the folder above its bin/, with its links resolved.
std::string toolkit_of(const std::string& nvcc) {
  std::error_code ec;
  const fs::path real = fs::canonical(nvcc, ec);
  if (ec || real.parent_path().filename() != "bin") return "";
  return real.parent_path().parent_path().string();
}

GpuAccess look() {
  GpuAccess g;
  const char* hide = std::getenv("WORKBOOK_GRADE_GPU");
  if (hide && std::string_view(hide) == "0") {
    g.notes.push_back("WORKBOOK_GRADE_GPU=0: the GPU is hidden from the grader");
    return g;
  }
  // Device nodes: every /dev/nvidia* (the GPUs, nvidiactl, nvidia-uvm, nvidia-uvm-tools,
  // nvidia-modeset) and the nvidia-caps folder. A node that others may not open is opened through
  // its group, which the sandbox user then joins; nothing else of /dev enters the jail.
  if (DIR* dev = opendir("/dev")) {
    while (const dirent* e = readdir(dev)) {
      const std::string name = e->d_name;
      if (name.rfind("nvidia", 0) != 0) continue;
      const std::string path = "/dev/" + name;
      struct stat s;
      if (stat(path.c_str(), &s) != 0 || !(S_ISCHR(s.st_mode) || S_ISDIR(s.st_mode))) continue;
      add_unique(g.devices, path);
      const bool open_to_all =
          S_ISDIR(s.st_mode) || (s.st_mode & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH);
      if (!open_to_all && (s.st_mode & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP) &&
          s.st_gid != 0 && std::find(g.groups.begin(), g.groups.end(), s.st_gid) == g.groups.end())
        g.groups.push_back(s.st_gid);
    }
    closedir(dev);
  }
  std::sort(g.devices.begin(), g.devices.end());
  const bool has_gpu_node =
      std::any_of(g.devices.begin(), g.devices.end(), [](const std::string& d) {
        return d == "/dev/nvidiactl" || (d.size() > 11 && d.rfind("/dev/nvidia", 0) == 0 &&
                                         std::isdigit(static_cast<unsigned char>(d[11])));
      });
  if (!has_gpu_node)
    g.notes.push_back(
        "no /dev/nvidiactl or /dev/nvidiaN: no NVIDIA GPU here (GPU labs report their tests "
        "skipped)");

  // The driver's libraries: where the loader's cache says, and where LD_LIBRARY_PATH says (module
  // systems and some container setups use it and leave the cache alone).
  for (const std::string& library : driver_libraries(ldconfig_listing())) {
    add_folders_of(library, g.libraries);
    if (fs::path(library).filename().string().rfind("libcuda.so", 0) == 0) {
      g.driver = true;
      add_unique(g.found, "driver: " + library + " (ldconfig)");
    }
  }
  std::string ld_path;
  if (const char* v = std::getenv("LD_LIBRARY_PATH")) {
    std::istringstream in(v);
    for (std::string folder; std::getline(in, folder, ':');) {
      if (folder.empty() || access((folder + "/libcuda.so.1").c_str(), R_OK) != 0) continue;
      add_folders_of(folder + "/libcuda.so.1", g.libraries);
      if (!under_system_folder(folder)) add_unique(g.libraries, folder);
      ld_path += (ld_path.empty() ? "" : ":") + folder;
      g.driver = true;
      add_unique(g.found, "driver: " + folder + "/libcuda.so.1 (LD_LIBRARY_PATH)");
    }
  }
  if (!ld_path.empty()) g.env.push_back("LD_LIBRARY_PATH=" + ld_path);
  if (has_gpu_node && !g.driver)
    g.notes.push_back(
        "a GPU device node but no libcuda.so.1 (neither in `ldconfig -p` nor on LD_LIBRARY_PATH): "
        "CUDA programs cannot start");

  // The toolkit (nvcc for the compile, CUPTI for the timer): CUDA_HOME, CUDA_PATH, nvcc on PATH.
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(variable);
    std::error_code ec;
    if (v && *v && fs::is_directory(v, ec)) {
      const std::string real = fs::canonical(v, ec).string();
      if (!ec && !under_system_folder(real)) add_unique(g.toolkit, real);
      if (!ec && !under_system_folder(v)) add_unique(g.toolkit, v);
    }
  }
  if (const std::string nvcc = find_on_path("nvcc"); !nvcc.empty()) {
    const std::string root = toolkit_of(nvcc);
    add_unique(g.found, "toolkit: " + (root.empty() ? nvcc : root) + " (nvcc on PATH)");
    if (!root.empty() && !under_system_folder(root)) add_unique(g.toolkit, root);
  }
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    if (const char* v = std::getenv(name)) g.env.push_back(std::string(name) + "=" + v);
  }
  for (const std::string& d : g.devices) g.found.push_back("device: " + d);
  return g;
}

}  // namespace

bool under_system_folder(std::string_view path) {
  for (std::string_view folder : kSystemFolders) {
    if (path.size() >= folder.size() && path.substr(0, folder.size()) == folder &&
        (path.size() == folder.size() || path[folder.size()] == '/'))
      return true;
  }
  return false;
}

bool GpuAccess::present() const {
  const bool node = std::any_of(devices.begin(), devices.end(),
                                [](const std::string& d) { return d == "/dev/nvidiactl"; });
  return node && driver;
}

nlohmann::json GpuAccess::to_json() const {
  nlohmann::json groups_json = nlohmann::json::array();
  for (gid_t g : groups) groups_json.push_back(g);
  return {{"present", present()}, {"devices", devices}, {"driver_libraries", libraries},
          {"toolkit", toolkit},   {"environment", env}, {"device_groups", groups_json},
          {"found", found},       {"notes", notes}};
}

const GpuAccess& gpu_access() {
  static const GpuAccess access = look();
  return access;
}

std::vector<std::string> driver_libraries(const std::string& ldconfig_output) {
  // "\tlibcuda.so.1 (libc6,x86-64) => /usr/local/nvidia/lib64/libcuda.so.1"
  std::vector<std::string> out;
  std::istringstream in(ldconfig_output);
  for (std::string line; std::getline(in, line);) {
    const std::size_t start = line.find_first_not_of(" \t");
    const std::size_t arrow = line.find(" => ");
    if (start == std::string::npos || arrow == std::string::npos) continue;
    const std::string name = line.substr(start, line.find(' ', start) - start);
    if (name.rfind("libcuda.so", 0) != 0 && name.rfind("libnvidia-", 0) != 0) continue;
    add_unique(out, line.substr(arrow + 4));
  }
  return out;
}

}  // namespace workbook::grade
