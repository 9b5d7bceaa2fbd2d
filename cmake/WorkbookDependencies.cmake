# Finds the dependencies, all from Debian 12 packages; nothing is downloaded. A missing one stops
# configure with the apt package that provides it.

set(WORKBOOK_APT_PACKAGES
  "cmake ninja-build g++ googletest libgtest-dev libxtensor-dev xtl-dev libxsimd-dev nlohmann-json3-dev libcli11-dev"
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
workbook_require(CLI11 libcli11-dev)
include(GoogleTest)

if(xsimd_VERSION VERSION_LESS 8 OR xsimd_VERSION VERSION_GREATER_EQUAL 9)
  message(WARNING "perf-workbook is written for xsimd 8 (Debian 12 ships 8.1); found ${xsimd_VERSION}, "
                  "whose API differs: expect compile errors in the SIMD code")
endif()

# OpenBLAS (Debian: libopenblas-dev, found through pkg-config, else by its header and library under
# CMAKE_PREFIX_PATH, as on a cluster without pkg-config) is optional: labs 02 and 04 show its sgemm
# and lab 01 its sdot beside the student's kernel and the reference, as the library a user would
# call instead.
# Sets the target workbook_openblas when found, and the global property
# WORKBOOK_OPENBLAS_ENVIRONMENT: OpenBLAS 0.3.21
# (Debian 12) does not know AMD Zen 4 and 5 and runs its AVX2 (Haswell) kernels there, at half the
# speed of its AVX-512 ones; when this build targets AVX-512, whatever times OpenBLAS runs with
# OPENBLAS_CORETYPE=SkylakeX, so that the baseline is the best the library can do here.
function(workbook_find_openblas)
  # Once per configure (labs 01, 02 and 04 ask): the imported target lives for one configure only,
  # so the guard must too (a cache variable would outlive it and lose OpenBLAS on a re-configure).
  get_property(looked GLOBAL PROPERTY WORKBOOK_OPENBLAS_LOOKED)
  if(looked)
    return()
  endif()
  set_property(GLOBAL PROPERTY WORKBOOK_OPENBLAS_LOOKED TRUE)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET GLOBAL openblas)
  endif()
  if(TARGET PkgConfig::OPENBLAS)
    add_library(workbook_openblas INTERFACE IMPORTED GLOBAL)
    target_link_libraries(workbook_openblas INTERFACE PkgConfig::OPENBLAS)
    set(found "OpenBLAS ${OPENBLAS_VERSION}")
  else()
    find_path(WORKBOOK_OPENBLAS_INCLUDE_DIR openblas_config.h PATH_SUFFIXES openblas openblas-pthread)
    find_library(WORKBOOK_OPENBLAS_LIBRARY NAMES openblas)
    if(WORKBOOK_OPENBLAS_INCLUDE_DIR AND WORKBOOK_OPENBLAS_LIBRARY)
      add_library(workbook_openblas UNKNOWN IMPORTED GLOBAL)
      set_target_properties(workbook_openblas PROPERTIES IMPORTED_LOCATION "${WORKBOOK_OPENBLAS_LIBRARY}"
                            INTERFACE_INCLUDE_DIRECTORIES "${WORKBOOK_OPENBLAS_INCLUDE_DIR}")
      set(found "OpenBLAS (${WORKBOOK_OPENBLAS_LIBRARY})")
    endif()
  endif()
  set(environment "")
  if(TARGET workbook_openblas)
    message(STATUS "${found} found: labs 01, 02 and 04 show it as their library baseline")
    if(WORKBOOK_NATIVE)
      include(CheckCXXSourceCompiles)
      set(CMAKE_REQUIRED_FLAGS -march=native)
      check_cxx_source_compiles("
        #if !(defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__))
        #error this build does not target AVX-512
        #endif
        int main() { return 0; }" WORKBOOK_TARGETS_AVX512)
      if(WORKBOOK_TARGETS_AVX512)
        set(environment "OPENBLAS_CORETYPE=SkylakeX")
      endif()
    endif()
  else()
    message(STATUS "OpenBLAS not found (Debian: libopenblas-dev): labs 01, 02 and 04 show no BLAS baseline")
  endif()
  set_property(GLOBAL PROPERTY WORKBOOK_OPENBLAS_ENVIRONMENT "${environment}")
endfunction()

# Links OpenBLAS into `target` (defining <prefix>_HAVE_OPENBLAS) and gives the TESTS that exist the
# environment above. Does nothing without OpenBLAS.
function(workbook_use_openblas target prefix)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "TESTS")
  workbook_find_openblas()
  if(NOT TARGET workbook_openblas)
    return()
  endif()
  # PUBLIC: the executables that link these objects (perf workers) need the library too.
  target_link_libraries(${target} PUBLIC workbook_openblas)
  target_compile_definitions(${target} PRIVATE ${prefix}_HAVE_OPENBLAS)
  get_property(environment GLOBAL PROPERTY WORKBOOK_OPENBLAS_ENVIRONMENT)
  foreach(test IN LISTS arg_TESTS)
    if(environment AND TEST ${test})  # labNN.bench exists with WORKBOOK_BENCH only
      set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT ${environment})
    endif()
  endforeach()
endfunction()
