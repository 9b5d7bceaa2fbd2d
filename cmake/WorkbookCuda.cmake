# CUDA is optional. With a CUDA compiler (nvcc) the GPU side of the harness (workbook::cuda) and the
# CUDA labs are built; on a machine without a GPU or driver their tests skip ("no CUDA device:
# skipped", exit code 77, which CTest shows as Skipped). Without a CUDA compiler the CPU labs build
# as usual and the CUDA labs are left out, with a message saying how to get them.
#
# Sets WORKBOOK_CUDA_FOUND, and WORKBOOK_COMPUTE_SANITIZER and WORKBOOK_NCU where those tools are.
#
# GPU tests can run elsewhere: a course whose students have no NVIDIA GPU sets a launcher once,
# WORKBOOK_GPU_LAUNCHER="srun -p gpu --gres=gpu:1 -t 5" (in the environment, or as this cache
# variable), and every GPU test runs through it, on a GPU node, from a laptop or login node.

option(WORKBOOK_CUDA "Build the CUDA labs when a CUDA compiler is found" ON)
# One architecture keeps CI's compile time down. 90 is Hopper (H100, H200), the GPU the labs'
# reference figures come from; set native to build for the GPU of this machine instead.
set(WORKBOOK_CUDA_ARCHITECTURES "90" CACHE STRING "GPU architectures of the CUDA labs (CMAKE_CUDA_ARCHITECTURES)")

# A build of CPU labs only (the lab01 .. lab04 presets, and the grader's cache when it prepares
# only those) needs no CUDA: finding nvcc costs configure time and the GPU side of the harness
# build time (a fifth of a grading cache's), in the student's first `cmake --preset && ctest`.
set(WORKBOOK_CUDA_NEEDED TRUE)
if(NOT WORKBOOK_LABS STREQUAL "all" AND NOT WORKBOOK_HARNESS_TESTS
   AND (NOT WORKBOOK_AUTOGRADER OR WORKBOOK_GRADE_PREPARE))
  set(WORKBOOK_CUDA_NEEDED FALSE)
  foreach(number IN LISTS WORKBOOK_LABS)
    file(GLOB cuda_sources "${PROJECT_SOURCE_DIR}/labs/${number}_*/*.cu")
    if(cuda_sources)
      set(WORKBOOK_CUDA_NEEDED TRUE)
    endif()
  endforeach()
endif()

set(WORKBOOK_CUDA_FOUND FALSE)
if(WORKBOOK_CUDA AND NOT WORKBOOK_CUDA_NEEDED)
  message(STATUS "CUDA: not needed by lab ${WORKBOOK_LABS}, so not looked for")
elseif(WORKBOOK_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "${WORKBOOK_CUDA_ARCHITECTURES}")
    endif()
    enable_language(CUDA)
    # CMake 3.25 (Debian 12) does not know that nvcc 12 and later take C++20 (that came in 3.26):
    # tell it, so that CUDA sources get -std=c++20 like the rest of the project.
    if(CMAKE_VERSION VERSION_LESS 3.26 AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
       AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(WORKBOOK_CUDA_FOUND TRUE)
    endif()
  endif()
endif()

if(WORKBOOK_CUDA_FOUND)
  message(STATUS "CUDA ${CMAKE_CUDA_COMPILER_VERSION} (${CMAKE_CUDA_COMPILER}), architectures ${CMAKE_CUDA_ARCHITECTURES}: "
                 "the CUDA labs are built; without a GPU their tests skip")
  find_program(WORKBOOK_COMPUTE_SANITIZER compute-sanitizer HINTS "${CUDAToolkit_BIN_DIR}")
  find_program(WORKBOOK_NCU ncu HINTS "${CUDAToolkit_BIN_DIR}")
elseif(WORKBOOK_CUDA AND WORKBOOK_CUDA_NEEDED)
  message(STATUS "CUDA: no CUDA compiler (nvcc) found, so the CUDA labs are left out. Install the CUDA "
                 "Toolkit and put nvcc on the PATH (or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc) to build them.")
elseif(NOT WORKBOOK_CUDA)
  message(STATUS "CUDA: off (WORKBOOK_CUDA=OFF), so the CUDA labs are left out")
endif()

set(WORKBOOK_GPU_LAUNCHER "$ENV{WORKBOOK_GPU_LAUNCHER}" CACHE STRING
    "Command that runs each GPU test, e.g. \"srun -p gpu --gres=gpu:1 -t 5\" (empty: run them here); the environment variable of the same name overrides it when ctest runs")
set(WORKBOOK_GPU_LAUNCH "${PROJECT_BINARY_DIR}/workbook-gpu-launch")
configure_file("${CMAKE_CURRENT_LIST_DIR}/workbook-gpu-launch.sh.in" "${WORKBOOK_GPU_LAUNCH}"
               FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE @ONLY)
if(WORKBOOK_GPU_LAUNCHER)
  message(STATUS "GPU tests run through the launcher \"${WORKBOOK_GPU_LAUNCHER}\" (WORKBOOK_GPU_LAUNCHER)")
endif()

# The CUDA labs' buggy kernels (workbook_add_mistakes GPU) only prove something on a GPU, and cost
# minutes of nvcc: they are built where this machine has a GPU driver (or a launcher reaches one),
# and elsewhere their tests skip saying so.
set(gpu_here OFF)
if(EXISTS "/dev/nvidiactl" OR WORKBOOK_GPU_LAUNCHER)
  set(gpu_here ON)
endif()
option(WORKBOOK_GPU_MISTAKES "Build the CUDA labs' buggy kernels (default: where a GPU driver is present)" ${gpu_here})

# Tests whose command is one of `targets` run through workbook-gpu-launch (CMake 3.29 calls the
# mechanism TEST_LAUNCHER; before, CROSSCOMPILING_EMULATOR does the same for add_test).
function(workbook_gpu_launched)
  foreach(target IN LISTS ARGN)
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
      set_property(TARGET ${target} PROPERTY TEST_LAUNCHER "${WORKBOOK_GPU_LAUNCH}")
    else()
      set_property(TARGET ${target} PROPERTY CROSSCOMPILING_EMULATOR "${WORKBOOK_GPU_LAUNCH}")
    endif()
  endforeach()
endfunction()

# Compiler settings of CUDA sources (the C++ ones are in workbook_target_defaults). nvcc's generated
# host code is not -Wpedantic clean (GCC line directives), so the host compiler gets -Wall -Wextra.
# -lineinfo costs no speed and lets compute-sanitizer and ncu name source lines.
set(WORKBOOK_CUDA_FLAGS -lineinfo -Xcompiler=-Wall,-Wextra,-Wno-missing-field-initializers)
if(WORKBOOK_WERROR)
  list(APPEND WORKBOOK_CUDA_FLAGS -Werror=all-warnings -Xcompiler=-Werror)
endif()
