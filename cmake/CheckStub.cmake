# Runs a lab's correctness tests against the stub (the unedited student file) and checks that they
# fail cleanly: no crash, and every failure says "not implemented yet: implement ... in <EDIT>".
# Usage: cmake -DEXE=<test executable> -DEDIT=<file the student edits> -DOUT=<json> [-DSKIP_CODE=77]
#        -P CheckStub.cmake
# With SKIP_CODE, an executable that exits with it (a GPU lab on a machine without a GPU) is passed
# through: its message ("no CUDA device: skipped") is printed, which the test's
# SKIP_REGULAR_EXPRESSION turns into a skip.
execute_process(COMMAND "${EXE}" "--gtest_output=json:${OUT}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(DEFINED SKIP_CODE AND rc STREQUAL "${SKIP_CODE}")
  message(STATUS "${out}")
  return()
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the tests crashed on the stub (${rc}) instead of failing with 'not implemented':\n${out}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "every test passed on the stub: a test that passes without an implementation checks nothing\n${out}")
endif()
file(READ "${OUT}" json)
string(JSON suites LENGTH "${json}" testsuites)
set(failed 0)
set(wrong "")
math(EXPR last_suite "${suites} - 1")
foreach(s RANGE ${last_suite})
  string(JSON cases LENGTH "${json}" testsuites ${s} testsuite)
  math(EXPR last_case "${cases} - 1")
  foreach(c RANGE ${last_case})
    string(JSON suite GET "${json}" testsuites ${s} name)
    string(JSON name GET "${json}" testsuites ${s} testsuite ${c} name)
    string(JSON failures ERROR_VARIABLE none GET "${json}" testsuites ${s} testsuite ${c} failures)
    if(none)
      continue()
    endif()
    math(EXPR failed "${failed} + 1")
    if(NOT failures MATCHES "not implemented yet: implement [A-Za-z_0-9:]+ in ${EDIT}")
      list(APPEND wrong "${suite}.${name}")
    endif()
  endforeach()
endforeach()
if(wrong)
  message(FATAL_ERROR "on the stub these tests failed without naming the function to implement in ${EDIT}: ${wrong}\n${out}")
endif()
message(STATUS "stub: ${failed} tests fail with 'not implemented yet: implement ... in ${EDIT}', none crashed")
