# cmake/TestSummary.cmake, through ctest as a student runs it: after the tests, one line per reason
# of the failures (tests with the same reason grouped, the harness's diagnosis preferred to the
# line that precedes it, output with ; [ ] \ in it intact), the skipped tests with their reason, the
# log of this run (not the one before), and nothing at all when every test passed. Checked with
# CMake 3.25 (Debian 12); a newer ctest that writes its log after the post-test commands must
# print no summary at all rather than an earlier run's.
# Usage: cmake -DWORK=<empty folder> -DSCRIPT=<TestSummary.cmake> -P <this file>
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/CTestCustom.cmake"
  "set(CTEST_CUSTOM_PRE_TEST \"\\\"${CMAKE_COMMAND}\\\" \\\"-DTESTING=${WORK}/Testing\\\" -DSTART=1 -P \\\"${SCRIPT}\\\"\")\n"
  "set(CTEST_CUSTOM_POST_TEST \"\\\"${CMAKE_COMMAND}\\\" \\\"-DTESTING=${WORK}/Testing\\\" -P \\\"${SCRIPT}\\\"\")\n")
function(write_tests function)
  # Each test prints what a test executable of the harness prints, from a file of its own.
  set(not_implemented "not implemented yet: implement ${function} in labs/01_x/ops.cpp")
  file(WRITE "${WORK}/a.txt" "unknown file: Failure\nC++ exception with description \"${not_implemented}\" thrown\n")
  file(WRITE "${WORK}/b.txt" "${not_implemented}\n")
  file(WRITE "${WORK}/c.txt"
    "ops_test.cpp:3: Failure\nadd: 3 of 9 elements are wrong [a; b] \\ x\n  Diagnosis: your output matches a + a\n")
  file(WRITE "${WORK}/d.txt" "ops_test.cpp:9: Failure\nValue of: x\ndot is 3, expected 4\n")
  file(WRITE "${WORK}/e.txt" "no CUDA device: skipped (no driver)\n")
  file(WRITE "${WORK}/g.txt" "no CUDA device: skipped (not built)\n")
  file(WRITE "${WORK}/h.txt" "[ RUN      ] Square.Tail\n\n*** HANG: the GPU's work did not finish within 10 s of the last kernel launch.\n  In test Square.Tail\n")
  file(WRITE "${WORK}/CTestTestfile.cmake"
    "add_test(Relu.A /bin/sh -c \"cat a.txt; ! grep -q implemented a.txt\")\n"
    "add_test(Relu.B /bin/sh -c \"cat b.txt; exit 1\")\n"
    "add_test(Add.C /bin/sh -c \"cat c.txt; exit 1\")\n"
    "add_test(Dot.D /bin/sh -c \"cat d.txt; exit 1\")\n"
    "add_test(Gpu.E /bin/sh -c \"cat e.txt; exit 77\")\n"
    "add_test(Gpu.G /bin/sh -c \"cat e.txt; exit 77\")\n"
    "add_test(Gpu.H /bin/sh -c \"cat g.txt; exit 77\")\n"
    "set_tests_properties(Gpu.E Gpu.G Gpu.H PROPERTIES SKIP_RETURN_CODE 77)\n"
    "add_test(Square.Tail /bin/sh -c \"cat h.txt; exit 3\")\n"
    "add_test(Fine.F /bin/true)\n")
endfunction()
function(run_ctest out)
  execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" ${ARGN} WORKING_DIRECTORY "${WORK}"
                  OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
function(expect text)
  foreach(expected IN LISTS ARGN)
    string(FIND "${text}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "ctest's summary lacks '${expected}'. ctest printed:\n${text}")
    endif()
  endforeach()
endfunction()

write_tests(relu)
run_ctest(text)
string(FIND "${text}" "Why the tests failed" at)
if(at EQUAL -1 AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.26)
  # A newer ctest may write its log only after the post-test commands: then no summary, and never
  # an old one (the next run must not show this run's reasons).
  write_tests(dot)
  run_ctest(text)
  string(FIND "${text}" "implement" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "ctest ${CMAKE_VERSION}: a summary from an earlier run:\n${text}")
  endif()
  message(STATUS "ctest ${CMAKE_VERSION} writes its log after the post-test commands: no summary")
  return()
endif()
expect("${text}"
  "Why the tests failed"
  "Relu.A and 1 more: not implemented yet: implement relu in labs/01_x/ops.cpp"
  "Add.C: Diagnosis: your output matches a + a"
  "Dot.D: dot is 3, expected 4"
  "Square.Tail: *** HANG: the GPU's work did not finish within 10 s of the last kernel launch."
  "2 test(s) did not run, so nothing of them was checked: no CUDA device: skipped (no driver)"
  "1 test(s) did not run, so nothing of them was checked: no CUDA device: skipped (not built)")

# The next run's summary is of that run: ctest moves its log into place only after this script.
write_tests(dot)
run_ctest(text)
expect("${text}" "Relu.A and 1 more: not implemented yet: implement dot in labs/01_x/ops.cpp")

# Output with list characters is shown as it was.
run_ctest(text -R Add.C --output-on-failure)
expect("${text}" "add: 3 of 9 elements are wrong [a; b] \\ x" "Add.C: Diagnosis: your output matches a + a")

# A test that failed in the run before and passes now is not reported (ctest leaves the last
# failures' list in place when none fail).
file(WRITE "${WORK}/a.txt" "all good\n")
run_ctest(text -R Relu.A)
string(FIND "${text}" "Why the tests" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "a test that failed before and passes now was reported:\n${text}")
endif()

run_ctest(text -R Fine)
string(FIND "${text}" "Why the tests" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "a run where every test passed printed a summary:\n${text}")
endif()
