#pragma once
/// \file gpu_access.hpp
/// \brief What a CUDA program needs from this machine inside the sandbox's jail, found on the
/// machine itself rather than from a list of paths: the GPU's device nodes, the driver's libraries
/// wherever this machine has them (the loader's cache, LD_LIBRARY_PATH, a container toolkit's
/// mounts), the CUDA toolkit (nvcc, CUPTI) when it lives outside the system folders, and the
/// environment that selects the GPU (CUDA_VISIBLE_DEVICES, as Slurm sets it). Only the sandboxed
/// runs of GPU labs get it (SandboxSpec::gpu); `workbook-grade doctor` reports what was found.
///
/// WORKBOOK_GRADE_GPU=0 hides the GPU from the grader (to grade as a machine without one would).

#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json_fwd.hpp>

namespace workbook::grade {

/// The folders every jail has, read-only (see sandbox.hpp); a path under one needs no mount of its
/// own.
inline constexpr const char* kSystemFolders[] = {"/usr",   "/etc",   "/bin",    "/sbin", "/lib",
                                                 "/lib32", "/lib64", "/libx32", "/opt"};

/// True when `path` is one of kSystemFolders or inside one.
bool under_system_folder(std::string_view path);

struct GpuAccess {
  std::vector<std::string> devices;    ///< device nodes and their folders: /dev/nvidia0,
                                       ///< /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-caps
  std::vector<std::string> libraries;  ///< folders of the driver's libraries that the jail must add
                                       ///< (outside the system folders)
  std::vector<std::string>
      toolkit;  ///< folders of the CUDA toolkit that the jail must add (outside the system folders)
  std::vector<std::string> env;  ///< "NAME=value" for a GPU run: CUDA_VISIBLE_DEVICES,
                                 ///< LD_LIBRARY_PATH where the loader's cache lacks the driver
  std::vector<gid_t>
      groups;  ///< groups of device nodes that others may not open: the sandbox user joins them
  std::vector<std::string> found;  ///< what was found where (for doctor)
  std::vector<std::string> notes;  ///< what is missing, and what that means
  bool driver = false;             ///< libcuda.so.1 was found
  /// A device node and the driver: a CUDA program can run here.
  bool present() const;
  nlohmann::json to_json() const;
};

/// Looks once per process (devices in /dev, `ldconfig -p`, LD_LIBRARY_PATH, CUDA_HOME, nvcc on
/// PATH).
const GpuAccess& gpu_access();

/// The driver's libraries `ldconfig -p` lists (libcuda.so*, libnvidia-*.so*): their paths.
std::vector<std::string> driver_libraries(const std::string& ldconfig_output);

}  // namespace workbook::grade
