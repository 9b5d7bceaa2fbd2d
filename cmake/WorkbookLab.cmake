# How a lab is built and tested. A lab's CMakeLists.txt makes one call:
#
#   workbook_add_lab(NUMBER 01
#     SOURCES vector_ops.cpp                # the file(s) the student edits
#     STUB    relu add ...                  # what the stub leaves to them: each function's
#                                           # `throw workbook::NotImplemented("relu")` (CheckStub)
#     TESTS   tests/vector_ops_test.cpp     # visible correctness tests (GoogleTest)
#     PERF    tests/perf_cases.cpp)         # the performance spec (WORKBOOK_PERF_CASE)
#
# SOURCES are compiled from labs/<lab>/ or, with WORKBOOK_IMPL=solutions, from solutions/<lab>/:
# the tests never know which. Each GoogleTest case becomes its own CTest test (lab01.Relu.Tail...),
# each perf case a test labelled perf that times the student's kernel against the reference.
#
# A CUDA lab adds CUDA (and, optionally, compute-sanitizer tools to run its tests under):
#
#   workbook_add_lab(NUMBER 05 CUDA
#     SOURCES square.cu  STUB square ...  TESTS tests/square_test.cpp  PERF tests/perf_cases.cpp
#     SANITIZE memcheck  SANITIZE_FILTER "Square*:Square2d*"
#     SERIAL   TimeLaunches)               # test suites that time kernels: alone under ctest -j
#
# Its tests are labelled gpu and skip (exit code 77) on a machine without a GPU or driver; it is
# left out, with a message, when no CUDA compiler was found (cmake/WorkbookCuda.cmake).

# --- Compiler settings shared by every target ----------------------------------------------------
if(WORKBOOK_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(WORKBOOK_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT WORKBOOK_SANITIZER STREQUAL "")
  message(FATAL_ERROR "WORKBOOK_SANITIZER is '${WORKBOOK_SANITIZER}': use address, thread or nothing")
endif()

# Warnings on for our own targets (dependencies come in as system headers, so theirs stay quiet).
# Designated initializers that leave members at their defaults are idiomatic C++20, so GCC 12's
# missing-field-initializers warning about them is off.
# CUDA sources get WORKBOOK_CUDA_FLAGS instead (cmake/WorkbookCuda.cmake).
function(workbook_target_defaults target)
  set(flags -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  if(WORKBOOK_WERROR)
    list(APPEND flags -Werror)
  endif()
  if(WORKBOOK_NATIVE)
    list(APPEND flags -march=native)
  endif()
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${flags}>"
                                           "$<$<COMPILE_LANGUAGE:CUDA>:${WORKBOOK_CUDA_FLAGS}>")
endfunction()

# A lab's own code (the student's, a reference, a mistake) carries line tables even in Release:
# the crash report and an exception's report name the line they came from (code_location.hpp).
# -g1 adds no code and leaves the optimised build as it is.
function(workbook_line_tables target)
  target_compile_options(${target} PRIVATE
    "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<OR:$<CONFIG:Release>,$<CONFIG:MinSizeRel>>>:-g1>")
endfunction()

# Every test gets these: the build fixture (so `ctest` builds first), and where to write results.
set(WORKBOOK_RESULTS_DIR "${PROJECT_BINARY_DIR}/results")
set(WORKBOOK_CEILINGS_FILE "${PROJECT_BINARY_DIR}/workbook-ceilings.json")
set(WORKBOOK_GPU_CEILINGS_FILE "${PROJECT_BINARY_DIR}/workbook-gpu-ceilings.json")
function(workbook_test_properties)
  cmake_parse_arguments(PARSE_ARGV 0 arg "GPU" "" "TESTS;LABELS;FIXTURES")
  set_tests_properties(${arg_TESTS} PROPERTIES
    LABELS "${arg_LABELS}"
    FIXTURES_REQUIRED "workbook_build;${arg_FIXTURES}"
    ENVIRONMENT "WORKBOOK_RESULTS_DIR=${WORKBOOK_RESULTS_DIR};WORKBOOK_CEILINGS=${WORKBOOK_CEILINGS_FILE};WORKBOOK_GPU_CEILINGS=${WORKBOOK_GPU_CEILINGS_FILE}")
  # GPU tests: "no CUDA device: skipped" (exit code 77) on a machine without a GPU or driver.
  if(arg_GPU)
    set_tests_properties(${arg_TESTS} PROPERTIES SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "no CUDA device: skipped")
  endif()
endfunction()

# --- `ctest` builds what it tests ----------------------------------------------------------------
# `cmake --preset lab01 && ctest` has no build step, so the first test builds the tree; every other
# test requires it (a failed build marks them "not run", which ctest counts as failures).
# ctest also builds while it reads the tests (cmake/BuildBeforeTests.cmake, unless
# WORKBOOK_CTEST_BUILDS is OFF), so that a compile error is printed, with the file to fix, in a plain
# `ctest` run.
function(workbook_add_build_fixture)
  add_test(NAME workbook.build COMMAND "${CMAKE_COMMAND}" --build "${PROJECT_BINARY_DIR}")
  set_tests_properties(workbook.build PROPERTIES FIXTURES_SETUP workbook_build LABELS build
    RUN_SERIAL TRUE TIMEOUT 1800)
  if(NOT WORKBOOK_CTEST_BUILDS)  # (the docs preset: its tests need the docs target only)
    return()
  endif()
  set(script "${PROJECT_BINARY_DIR}/workbook-build-before-tests.cmake")
  file(WRITE "${script}"
    "set(WORKBOOK_BUILD_DIR \"${PROJECT_BINARY_DIR}\")\n"
    "set(WORKBOOK_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")\n"
    "set(WORKBOOK_CMAKE \"${CMAKE_COMMAND}\")\n"
    "include(\"${PROJECT_SOURCE_DIR}/cmake/BuildBeforeTests.cmake\")\n")
  set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()

# --- A plain `ctest` in the source root runs the build configured last -----------------------------
# The committed CTestTestfile.cmake in the source root includes build/last-configured.cmake.
function(workbook_register_last_build)
  if(NOT WORKBOOK_REGISTER_LAST_BUILD OR PROJECT_BINARY_DIR STREQUAL PROJECT_SOURCE_DIR)
    return()
  endif()
  file(WRITE "${PROJECT_SOURCE_DIR}/build/last-configured.cmake"
    "# Written by the configure of ${PROJECT_BINARY_DIR}: a plain `ctest` in the source root\n"
    "# runs that build's tests (see CTestTestfile.cmake in the source root).\n"
    "subdirs(\"${PROJECT_BINARY_DIR}\")\n")
endfunction()

# --- After the tests: why each one failed, in one line ----------------------------------------------
# A plain `ctest` shows a failing test as "***Failed" and a test skipped for want of a GPU as
# "Passed"; cmake/TestSummary.cmake, run after the tests, prints the line of each one's output that
# says why. ctest reads CTestCustom.cmake from the folder it runs in: the source root has its own
# (committed), and each build folder gets this one (`cd build/lab01 && ctest`).
function(workbook_write_test_summary_hook)
  if(PROJECT_BINARY_DIR STREQUAL PROJECT_SOURCE_DIR)
    return()
  endif()
  file(WRITE "${PROJECT_BINARY_DIR}/CTestCustom.cmake"
    "# Written by the configure: see workbook_write_test_summary_hook in cmake/WorkbookLab.cmake.\n"
    "set(CTEST_CUSTOM_PRE_TEST \"\\\"${CMAKE_COMMAND}\\\" \\\"-DTESTING=${PROJECT_BINARY_DIR}/Testing\\\" "
    "-DSTART=1 -P \\\"${PROJECT_SOURCE_DIR}/cmake/TestSummary.cmake\\\"\")\n"
    "set(CTEST_CUSTOM_POST_TEST \"\\\"${CMAKE_COMMAND}\\\" \\\"-DTESTING=${PROJECT_BINARY_DIR}/Testing\\\" "
    "-P \\\"${PROJECT_SOURCE_DIR}/cmake/TestSummary.cmake\\\"\")\n")
endfunction()

# --- One lab -------------------------------------------------------------------------------------
function(workbook_add_lab)
  cmake_parse_arguments(PARSE_ARGV 0 arg "CUDA" "NUMBER;MAX_RATIO;SANITIZE_FILTER" "SOURCES;STUB;TESTS;PERF;LIBRARIES;SANITIZE;SERIAL")
  if(NOT arg_NUMBER OR NOT arg_SOURCES OR NOT arg_STUB OR NOT arg_TESTS)
    message(FATAL_ERROR "workbook_add_lab needs NUMBER, SOURCES, STUB (the functions the stub leaves "
                        "to the student, each a `throw workbook::NotImplemented(\"name\")`) and TESTS")
  endif()
  # A CUDA lab needs the CUDA compiler; without it the lab is left out (the CPU labs are not).
  set(gpu "")
  set(gpu_label "")
  set(test_main workbook::testing_main)
  cmake_path(GET CMAKE_CURRENT_SOURCE_DIR FILENAME folder)
  if(WORKBOOK_IMPL STREQUAL "solutions" AND arg_PERF AND EXISTS "${PROJECT_SOURCE_DIR}/solutions/${folder}")
    # The kit's yardstick, tests/reference_profile.json, and the handout's table of it must come
    # from this reference: checked from the sources alone, so also where the lab cannot run (no GPU).
    set(gpu_note "")
    if(arg_CUDA)
      set(gpu_note " with a GPU")
    endif()
    add_test(NAME lab${arg_NUMBER}.reference_data
      COMMAND "${CMAKE_COMMAND}" -DMODE=check "-DROOT=${PROJECT_SOURCE_DIR}" "-DFOLDER=${folder}"
              "-DSOURCES=${arg_SOURCES}" "-DPERF=${arg_PERF}" "-DGPU_NOTE=${gpu_note}"
              "-DRESULTS=${WORKBOOK_RESULTS_DIR}/lab${arg_NUMBER}/reference_profile.json"
              -P "${PROJECT_SOURCE_DIR}/cmake/ReferenceData.cmake")
    set_tests_properties(lab${arg_NUMBER}.reference_data PROPERTIES LABELS "lab${arg_NUMBER};consistency")
  endif()
  if(arg_CUDA)
    if(NOT WORKBOOK_CUDA_FOUND)
      message(STATUS "lab${arg_NUMBER} is a CUDA lab and is left out: CUDA is off or no CUDA compiler was found (see above)")
      # Its solution side may still have host tests (workbook_add_host_tests): they need no CUDA.
      if(WORKBOOK_IMPL STREQUAL "solutions" AND EXISTS "${PROJECT_SOURCE_DIR}/solutions/${folder}/CMakeLists.txt")
        set(WORKBOOK_LAB "lab${arg_NUMBER}")
        set(WORKBOOK_LAB_DIR "${PROJECT_SOURCE_DIR}/labs/${folder}")
        set(WORKBOOK_LAB_LEFT_OUT TRUE)
        add_subdirectory("${PROJECT_SOURCE_DIR}/solutions/${folder}" "${CMAKE_CURRENT_BINARY_DIR}/solution")
      endif()
      return()
    endif()
    set(gpu GPU)
    set(gpu_label ";gpu")
    set(test_main workbook::cuda_testing_main)
    list(APPEND arg_LIBRARIES workbook::cuda)
  endif()
  if(NOT arg_MAX_RATIO)
    set(arg_MAX_RATIO 1.25)   # the perf test passes within 1.25x of the reference's time
  endif()
  set(lab "lab${arg_NUMBER}")
  set(student_dir "${PROJECT_SOURCE_DIR}/labs/${folder}")
  set(solution_dir "${PROJECT_SOURCE_DIR}/solutions/${folder}")
  set(has_solution TRUE)
  foreach(source IN LISTS arg_SOURCES)
    if(NOT EXISTS "${solution_dir}/${source}")
      set(has_solution FALSE)
    endif()
  endforeach()
  if(WORKBOOK_IMPL STREQUAL "solutions" AND NOT has_solution)
    message(FATAL_ERROR "${lab}: WORKBOOK_IMPL=solutions but solutions/${folder} lacks ${arg_SOURCES}")
  endif()
  list(GET arg_SOURCES 0 first_source)
  set(edit_file "labs/${folder}/${first_source}")

  # The implementation under test, and the reference it is compared with.
  if(WORKBOOK_IMPL STREQUAL "solutions")
    _workbook_lab_library(${lab}_impl "${solution_dir}" "${student_dir}" "${arg_SOURCES}" "${arg_LIBRARIES}")
    set(reference ${lab}_impl)
  else()
    _workbook_lab_library(${lab}_impl "${student_dir}" "${student_dir}" "${arg_SOURCES}" "${arg_LIBRARIES}")
    if(has_solution)
      _workbook_lab_library(${lab}_reference "${solution_dir}" "${student_dir}" "${arg_SOURCES}" "${arg_LIBRARIES}")
      set(reference ${lab}_reference)
    endif()
  endif()

  # Correctness tests: compiled once, linked against the implementation under test.
  add_library(${lab}_test_objects OBJECT ${arg_TESTS})
  target_include_directories(${lab}_test_objects PRIVATE "${student_dir}")
  target_link_libraries(${lab}_test_objects PRIVATE workbook::testing ${arg_LIBRARIES})
  workbook_target_defaults(${lab}_test_objects)
  add_executable(${lab}_tests)
  target_link_libraries(${lab}_tests PRIVATE ${lab}_test_objects ${lab}_impl ${test_main})
  if(gpu)
    workbook_gpu_launched(${lab}_tests)  # before the tests exist: they take it from the target
  endif()
  gtest_add_tests(TARGET ${lab}_tests SOURCES ${arg_TESTS} TEST_PREFIX "${lab}." TEST_LIST tests)
  workbook_test_properties(TESTS ${tests} LABELS "${lab};correctness${gpu_label}" ${gpu})
  # Where the compiler's warnings about the implementation are kept: a failing test shows them.
  set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT
    "WORKBOOK_WARNINGS_DIR=${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${lab}_impl.dir")
  _workbook_run_serial("${tests}" ${lab} "${arg_SERIAL}")

  # With the solutions, also prove the stub fails every test it should with "not implemented".
  if(WORKBOOK_IMPL STREQUAL "solutions")
    _workbook_lab_library(${lab}_stub "${student_dir}" "${student_dir}" "${arg_SOURCES}" "${arg_LIBRARIES}")
    add_executable(${lab}_tests_on_stub)
    target_link_libraries(${lab}_tests_on_stub PRIVATE ${lab}_test_objects ${lab}_stub ${test_main})
    set(launch "")
    if(gpu)
      set(launch "${WORKBOOK_GPU_LAUNCH}")
    endif()
    add_test(NAME ${lab}.stub_reports_not_implemented
      COMMAND ${launch} "${CMAKE_COMMAND}" -P "${CMAKE_CURRENT_BINARY_DIR}/check_stub.cmake")
    workbook_test_properties(TESTS ${lab}.stub_reports_not_implemented LABELS "${lab};correctness;stub${gpu_label}" ${gpu})
    set(stub_tests ${lab}_tests_on_stub)
  else()
    set(stub_tests ${lab}_tests)  # a student's build: the stub check is the kit's (workbook-grade kit)
  endif()
  # The stub check (cmake/CheckStub.cmake), with this lab's arguments: the test above runs it, and
  # `workbook-grade kit` in the kit's own build, whose implementation is the stub it exports.
  list(TRANSFORM arg_SOURCES PREPEND "${student_dir}/" OUTPUT_VARIABLE stub_files)
  file(GENERATE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/check_stub.cmake" CONTENT
    "set(EXE \"$<TARGET_FILE:${stub_tests}>\")\nset(EDIT \"${edit_file}\")\nset(FUNCTIONS \"${arg_STUB}\")\n\
set(STUB_FILES \"${stub_files}\")\nset(OUT \"${PROJECT_BINARY_DIR}/stub-${lab}.json\")\nset(SKIP_CODE 77)\n\
include(\"${PROJECT_SOURCE_DIR}/cmake/CheckStub.cmake\")\n")

  if(arg_PERF)
    _workbook_lab_perf(${lab} "${arg_PERF}" "${student_dir}" "${reference}" "${edit_file}" ${arg_MAX_RATIO} "${gpu}")
  endif()

  # compute-sanitizer runs the correctness tests (those SANITIZE_FILTER selects) under each tool.
  foreach(tool IN LISTS arg_SANITIZE)
    set(name ${lab}.sanitizer.${tool})
    if(WORKBOOK_COMPUTE_SANITIZER)
      set(filter "")
      if(arg_SANITIZE_FILTER)
        set(filter "--gtest_filter=${arg_SANITIZE_FILTER}")
      endif()
      add_test(NAME ${name} COMMAND "${WORKBOOK_GPU_LAUNCH}" "${WORKBOOK_COMPUTE_SANITIZER}" --tool ${tool} --error-exitcode 99
                                    $<TARGET_FILE:${lab}_tests> ${filter})
    else()
      add_test(NAME ${name} COMMAND "${CMAKE_COMMAND}" -E echo
               "compute-sanitizer was not found with the CUDA toolkit: ${tool} skipped")
    endif()
    workbook_test_properties(TESTS ${name} LABELS "${lab};sanitizer;gpu" GPU)
    set_tests_properties(${name} PROPERTIES TIMEOUT 900)
    # Kernels run many times slower under the tool: no hang watchdog (cuda/watchdog.hpp) there.
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "WORKBOOK_GPU_TIMEOUT=0")
    if(NOT WORKBOOK_COMPUTE_SANITIZER)
      set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "skipped")
    endif()
  endforeach()

  # The solutions folder may add numbered versions, their tests and the lab's benchmark.
  if(WORKBOOK_IMPL STREQUAL "solutions" AND EXISTS "${solution_dir}/CMakeLists.txt")
    set(WORKBOOK_LAB ${lab})
    set(WORKBOOK_LAB_DIR "${student_dir}")
    set(WORKBOOK_LAB_LEFT_OUT FALSE)
    add_subdirectory("${solution_dir}" "${CMAKE_CURRENT_BINARY_DIR}/solution")
  endif()
endfunction()

# --- A solution's own tests and bench --------------------------------------------------------------
# For solutions/NN_*/CMakeLists.txt (WORKBOOK_LAB and WORKBOOK_LAB_DIR set by workbook_add_lab):
#
#   workbook_add_solution_extras(GPU TESTS tests/versions_test.cpp LIBRARIES lab05_versions BENCH bench.cpp)
#
# SERIAL names test suites that time kernels (they run alone under ctest -j, as workbook_add_lab's).
#
# TESTS become labNN_versions_tests, one CTest test per GoogleTest test (labels correctness and
# versions; GPU: gpu, skipped without a GPU), with the lab's tests/ folder on the include path.
# BENCH becomes labNN_bench, registered as the test labNN.bench (label bench) with WORKBOOK_BENCH.
# It links the lab's perf cases (tests/perf_cases.cpp): the bench times those cases, with the
# solution's numbered versions in the kernel's place (workbook::LabBench in bench.hpp).
function(workbook_add_solution_extras)
  cmake_parse_arguments(PARSE_ARGV 0 arg "GPU" "BENCH" "TESTS;LIBRARIES;SERIAL")
  set(lab ${WORKBOOK_LAB})
  set(test_main workbook::testing_main)
  set(ceilings "${WORKBOOK_CEILINGS_FILE}")
  set(fixture workbook_ceilings)
  set(gpu "")
  set(gpu_label "")
  if(arg_GPU)
    set(test_main workbook::cuda_testing_main)
    set(ceilings "${WORKBOOK_GPU_CEILINGS_FILE}")
    set(fixture workbook_gpu_ceilings)
    set(gpu GPU)
    set(gpu_label ";gpu")
  endif()
  if(arg_TESTS)
    add_executable(${lab}_versions_tests ${arg_TESTS})
    target_include_directories(${lab}_versions_tests PRIVATE "${WORKBOOK_LAB_DIR}/tests")
    target_link_libraries(${lab}_versions_tests PRIVATE ${arg_LIBRARIES} ${test_main} GTest::gmock)
    workbook_target_defaults(${lab}_versions_tests)
    if(arg_GPU)
      workbook_gpu_launched(${lab}_versions_tests)
    endif()
    gtest_add_tests(TARGET ${lab}_versions_tests SOURCES ${arg_TESTS} TEST_PREFIX "${lab}." TEST_LIST tests)
    workbook_test_properties(TESTS ${tests} LABELS "${lab};correctness;versions${gpu_label}" ${gpu})
    _workbook_run_serial("${tests}" ${lab} "${arg_SERIAL}")
    set(WORKBOOK_VERSIONS_TESTS ${tests} PARENT_SCOPE)  # for a lab that sets more properties on them
  endif()
  if(arg_BENCH)
    add_executable(${lab}_bench ${arg_BENCH})
    target_include_directories(${lab}_bench PRIVATE "${WORKBOOK_LAB_DIR}/tests")
    target_link_libraries(${lab}_bench PRIVATE ${arg_LIBRARIES} workbook::bench)
    if(TARGET ${lab}_perf_cases)
      target_link_libraries(${lab}_bench PRIVATE ${lab}_perf_cases)
    endif()
    workbook_target_defaults(${lab}_bench)
    if(arg_GPU)
      workbook_gpu_launched(${lab}_bench)
    endif()
    if(WORKBOOK_BENCH)
      add_test(NAME ${lab}.bench COMMAND ${lab}_bench --ceilings "${ceilings}" --results "${WORKBOOK_RESULTS_DIR}")
      workbook_test_properties(TESTS ${lab}.bench LABELS "${lab};bench${gpu_label}" FIXTURES ${fixture} ${gpu})
      set_tests_properties(${lab}.bench PROPERTIES RUN_SERIAL TRUE)
    endif()
  endif()
endfunction()

# --- Host tests of a solution ----------------------------------------------------------------------
# For solutions/NN_*/CMakeLists.txt: GoogleTest sources that need only the host compiler (a CUDA
# lab's catalogue of mistakes, proved on the CPU with emulated outputs), with the lab's folder and
# its tests/ on the include path. A CUDA lab's solution CMakeLists.txt is read even where no CUDA compiler was
# found, with WORKBOOK_LAB_LEFT_OUT set: it adds its host tests, then returns.
#
#   workbook_add_host_tests(tests/mistakes_test.cpp)
#   if(WORKBOOK_LAB_LEFT_OUT)
#     return()
#   endif()
function(workbook_add_host_tests)
  set(lab ${WORKBOOK_LAB})
  add_executable(${lab}_host_tests ${ARGN})
  target_include_directories(${lab}_host_tests PRIVATE "${WORKBOOK_LAB_DIR}" "${WORKBOOK_LAB_DIR}/tests")
  target_link_libraries(${lab}_host_tests PRIVATE workbook::testing_main GTest::gmock)
  workbook_target_defaults(${lab}_host_tests)
  gtest_add_tests(TARGET ${lab}_host_tests SOURCES ${ARGN} TEST_PREFIX "${lab}." TEST_LIST tests)
  workbook_test_properties(TESTS ${tests} LABELS "${lab};correctness;mistakes")
endfunction()

# --- A lab's catalogue of mistakes, proved on buggy implementations ---------------------------------
# For solutions/NN_*/CMakeLists.txt:
#
#   workbook_add_mistakes(GPU FILES mistakes/variance_over_n_minus_1.cu ...)
#
# Each file is a buggy implementation, written as a student would write it, of one or more of the
# lab's functions, and says in its first comment lines which test must catch it and what that
# test's message must contain (literally; one or more Expect lines):
#
#   // Mistake: the variance divided by cols - 1, as numpy.var(ddof=1) does.
#   // Checked by: Normalize.EveryRowWidth
#   // Expect: your output matches the variance divided by cols - 1
#
# It is linked with the lab's tests and, for every function it does not define, the reference (the
# linker takes the first definition: the buggy one). Its own helpers and kernels belong in an
# anonymous namespace, so that they cannot replace the reference's. The test <lab>.mistake.<name>
# runs the test named and passes only when that test fails with every Expect line in its output
# and nothing FORBID matches (a regex; for GPU, by default, SIMD's vocabulary). GPU: skipped without
# a GPU, and built only where a GPU driver was present at configure time (WORKBOOK_GPU_MISTAKES,
# WorkbookCuda.cmake).
function(workbook_add_mistakes)
  cmake_parse_arguments(PARSE_ARGV 0 arg "GPU" "FORBID" "FILES")
  set(lab ${WORKBOOK_LAB})
  set(test_main workbook::testing_main)
  set(gpu "")
  set(gpu_label "")
  set(launch "")
  if(arg_GPU)
    set(test_main workbook::cuda_testing_main)
    set(gpu GPU)
    set(gpu_label ";gpu")
    set(launch "${WORKBOOK_GPU_LAUNCH}")
    if(NOT arg_FORBID)  # a CUDA lab's messages speak of grids, blocks and threads, never of SIMD
      set(arg_FORBID "SIMD|[Bb]atch|[^a-z]lanes?[^a-z]|tail loop")
    endif()
  endif()
  foreach(file IN LISTS arg_FILES)
    set(source "${CMAKE_CURRENT_SOURCE_DIR}/${file}")
    file(STRINGS "${source}" checked_by REGEX "^// Checked by: ")
    file(STRINGS "${source}" expect REGEX "^// Expect: ")
    if(NOT checked_by OR NOT expect)
      message(FATAL_ERROR "${file}: a mistake needs '// Checked by: Suite.Test' and '// Expect: ...' lines")
    endif()
    cmake_path(GET file STEM name)
    if(arg_GPU AND NOT WORKBOOK_GPU_MISTAKES)
      add_test(NAME ${lab}.mistake.${name} COMMAND "${CMAKE_COMMAND}" -E echo
               "no CUDA device: skipped (no GPU driver when this build was configured, so the buggy kernel was not built; -DWORKBOOK_GPU_MISTAKES=ON builds it)")
      workbook_test_properties(TESTS ${lab}.mistake.${name} LABELS "${lab};correctness;mistakes${gpu_label}" ${gpu})
      continue()
    endif()
    set(exe ${lab}_mistake_${name})
    add_executable(${exe} "${source}")
    target_include_directories(${exe} PRIVATE "${WORKBOOK_LAB_DIR}" "${WORKBOOK_LAB_DIR}/tests")
    target_link_libraries(${exe} PRIVATE ${lab}_test_objects ${lab}_impl ${test_main})
    target_link_options(${exe} PRIVATE "LINKER:--allow-multiple-definition")
    workbook_target_defaults(${exe})
    workbook_line_tables(${exe})
    if(arg_GPU)
      target_link_libraries(${exe} PRIVATE workbook::cuda)
    endif()
    add_test(NAME ${lab}.mistake.${name}
      COMMAND ${launch} "${CMAKE_COMMAND}" -DEXE=$<TARGET_FILE:${exe}> "-DSOURCE=${source}" "-DFORBID=${arg_FORBID}"
              -DSKIP_CODE=77 -P "${PROJECT_SOURCE_DIR}/cmake/CheckMistake.cmake")
    workbook_test_properties(TESTS ${lab}.mistake.${name} LABELS "${lab};correctness;mistakes${gpu_label}" ${gpu})
    set_tests_properties(${lab}.mistake.${name} PROPERTIES TIMEOUT 300)
  endforeach()
endfunction()

# The tests of `suites` (GoogleTest suite names, e.g. TimeLaunches) among `tests` time something of
# known length: under `ctest -j` they run alone.
function(_workbook_run_serial tests lab suites)
  foreach(suite IN LISTS suites)
    set(serial ${tests})
    list(FILTER serial INCLUDE REGEX "^${lab}\\.${suite}\\.")
    if(serial)
      set_tests_properties(${serial} PROPERTIES RUN_SERIAL TRUE)
    endif()
  endforeach()
endfunction()

# A static library of one implementation of a lab (student's, reference or stub).
function(_workbook_lab_library target impl_dir header_dir sources libraries)
  list(TRANSFORM sources PREPEND "${impl_dir}/")
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC "${header_dir}")
  target_link_libraries(${target} PUBLIC workbook::workbook ${libraries})
  workbook_target_defaults(${target})
  workbook_line_tables(${target})
  # The compiler's warnings about the lab's code are kept for the tests to show (keep_warnings.sh).
  set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
    "${PROJECT_SOURCE_DIR}/cmake/keep_warnings.sh;${CMAKE_CXX_COMPILER_LAUNCHER}")
  if(NOT CMAKE_CXX_COMPILER_LAUNCHER)
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "${PROJECT_SOURCE_DIR}/cmake/keep_warnings.sh")
  endif()
endfunction()

# Perf cases: one worker executable per implementation (same case objects, different kernels), and
# one test per case that runs workbook-perf to time them interleaved.
# A GPU lab (gpu = GPU) uses the GPU's worker main, driver, ceilings and skip code.
function(_workbook_lab_perf lab perf_sources student_dir reference edit_file max_ratio gpu)
  set(perf_main workbook::perf_main)
  set(driver workbook-perf)
  set(ceilings "${WORKBOOK_CEILINGS_FILE}")
  set(ceilings_fixture workbook_ceilings)
  set(gpu_label "")
  if(gpu)
    set(perf_main workbook::cuda_perf_main)
    set(driver workbook-gpu-perf)
    set(ceilings "${WORKBOOK_GPU_CEILINGS_FILE}")
    set(ceilings_fixture workbook_gpu_ceilings)
    set(gpu_label ";gpu")
  endif()
  add_library(${lab}_perf_cases OBJECT ${perf_sources})
  target_include_directories(${lab}_perf_cases PRIVATE "${student_dir}")
  target_link_libraries(${lab}_perf_cases PRIVATE workbook::workbook $<$<BOOL:${gpu}>:workbook::cuda>)
  workbook_target_defaults(${lab}_perf_cases)

  add_executable(${lab}_perf)
  target_link_libraries(${lab}_perf PRIVATE ${lab}_perf_cases ${lab}_impl ${perf_main})
  if(gpu)
    workbook_gpu_launched(${lab}_perf)  # its ncu test; the perf tests run the driver, launched too
  endif()
  if(reference)
    if(reference STREQUAL "${lab}_impl")
      set(reference_worker ${lab}_perf)
    else()
      add_executable(${lab}_perf_reference)
      target_link_libraries(${lab}_perf_reference PRIVATE ${lab}_perf_cases ${reference} ${perf_main})
      set(reference_worker ${lab}_perf_reference)
    endif()
    set(against --reference "$<TARGET_FILE:${reference_worker}>")
  elseif(EXISTS "${student_dir}/tests/reference_profile.json")
    # The student kit has no solutions: judge against the fraction of the roofline the reference reached.
    set(against --profile "${student_dir}/tests/reference_profile.json")
  else()
    message(FATAL_ERROR "${lab} has perf cases but neither a reference solution nor tests/reference_profile.json")
  endif()

  set(names "")
  foreach(source IN LISTS perf_sources)
    file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/${source}" lines REGEX "^WORKBOOK_PERF_CASE\\(")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^WORKBOOK_PERF_CASE\\(([A-Za-z0-9_]+).*" "\\1" name "${line}")
      list(APPEND names ${name})
    endforeach()
  endforeach()
  foreach(name IN LISTS names)
    add_test(NAME ${lab}.perf.${name}
      COMMAND ${driver} --lab ${lab} --case ${name} --student "$<TARGET_FILE:${lab}_perf>" ${against}
              --max-ratio ${max_ratio} --edit ${edit_file}
              --ceilings "${ceilings}" --results "${WORKBOOK_RESULTS_DIR}")
    workbook_test_properties(TESTS ${lab}.perf.${name} LABELS "${lab};perf${gpu_label}" FIXTURES ${ceilings_fixture} ${gpu})
    set_tests_properties(${lab}.perf.${name} PROPERTIES RUN_SERIAL TRUE)
    if(WORKBOOK_BENCH AND reference)
      # The bench records the fraction of the roofline the reference reaches: the student kit's yardstick.
      add_test(NAME ${lab}.profile.${name}
        COMMAND ${driver} --lab ${lab} --case ${name} --student "$<TARGET_FILE:${reference_worker}>"
                --record-profile "${WORKBOOK_RESULTS_DIR}/${lab}/reference_profile.json"
                --ceilings "${ceilings}" --results "${WORKBOOK_RESULTS_DIR}")
      workbook_test_properties(TESTS ${lab}.profile.${name} LABELS "${lab};bench${gpu_label}" FIXTURES ${ceilings_fixture} ${gpu})
      set_tests_properties(${lab}.profile.${name} PROPERTIES RUN_SERIAL TRUE)
    endif()
    if(gpu AND WORKBOOK_BENCH AND WORKBOOK_NCU)
      # The harness's timing next to Nsight Compute's, with its Speed-of-Light verdict.
      add_test(NAME ${lab}.ncu.${name}
        COMMAND ${lab}_perf --ncu ${name} --lab ${lab} --ceilings "${ceilings}" --results "${WORKBOOK_RESULTS_DIR}")
      workbook_test_properties(TESTS ${lab}.ncu.${name} LABELS "${lab};bench;ncu;gpu" FIXTURES ${ceilings_fixture} GPU)
      set_tests_properties(${lab}.ncu.${name} PROPERTIES RUN_SERIAL TRUE)
    endif()
  endforeach()
endfunction()
