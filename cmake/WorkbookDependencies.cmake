# Finds the dependencies, all from Debian 12 packages; nothing is downloaded. A missing one stops
# configure with the apt package that provides it.

set(WORKBOOK_APT_PACKAGES
  "cmake ninja-build g++ googletest libgtest-dev libxtensor-dev xtl-dev libxsimd-dev nlohmann-json3-dev"
  CACHE INTERNAL "Debian packages the build needs")

# workbook_require(<package> <apt package> [<find_package arguments>...])
macro(workbook_require package apt)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR
      "perf-workbook needs ${package}, which is not installed.\n"
      "Install it with:   sudo apt-get install ${apt}\n"
      "Everything at once: sudo apt-get install ${WORKBOOK_APT_PACKAGES}")
  endif()
endmacro()

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
workbook_require(GTest "googletest libgtest-dev")
workbook_require(xtl xtl-dev)
workbook_require(xsimd libxsimd-dev)
workbook_require(xtensor libxtensor-dev)
workbook_require(nlohmann_json nlohmann-json3-dev)
include(GoogleTest)

if(xsimd_VERSION VERSION_LESS 8 OR xsimd_VERSION VERSION_GREATER_EQUAL 9)
  message(WARNING "perf-workbook is written for xsimd 8 (Debian 12 ships 8.1); found ${xsimd_VERSION}, "
                  "whose API differs: expect compile errors in the SIMD code")
endif()
