# Checks a lab's stub, the students' starting point, in two ways:
#  - its sources (STUB_FILES) still throw workbook::NotImplemented for every function the lab leaves
#    to the student (FUNCTIONS: the STUB list of workbook_add_lab in labs/NN_*/CMakeLists.txt), and
#    for no other: a stub someone implemented (an instructor trying the lab in the course's clone)
#    would otherwise reach the students through the kit, and give @stub points;
#  - the lab's correctness tests (EXE) fail on it cleanly: no crash, and every failure says "not
#    implemented yet: implement ... in <EDIT>".
# Usage: cmake -DEXE=<test executable> -DEDIT=<file the student edits> -DOUT=<json>
#        [-DFUNCTIONS=<names> -DSTUB_FILES=<paths>] [-DSKIP_CODE=77] -P CheckStub.cmake
# (without STUB_FILES, the tests only: the hidden tests' check in autograder/CMakeLists.txt)
# (each lab's build writes these in labs/NN_*/check_stub.cmake; the solutions build runs it as the
# test labNN.stub_reports_not_implemented, `workbook-grade kit` in the kit's build).
# With SKIP_CODE, an executable that exits with it (a GPU lab on a machine without a GPU) is passed
# through after the source check: its message ("no CUDA device: skipped") is printed after "stub
# tests skipped: ", which the test's SKIP_REGULAR_EXPRESSION turns into a skip.
set(marked "")
set(STUB_FILES "${STUB_FILES}")
foreach(file IN LISTS STUB_FILES)
  file(STRINGS "${file}" lines REGEX "NotImplemented\\(\"[^\"]+\"\\)")
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "NotImplemented\\(\"[^\"]+\"\\)" calls "${line}")
    foreach(call IN LISTS calls)
      string(REGEX REPLACE "NotImplemented\\(\"([^\"]+)\"\\)" "\\1" name "${call}")
      list(APPEND marked "${name}")
    endforeach()
  endforeach()
endforeach()
set(implemented "${FUNCTIONS}")
set(unlisted "${marked}")
if(marked)
  list(REMOVE_ITEM implemented ${marked})
endif()
if(FUNCTIONS)
  list(REMOVE_ITEM unlisted ${FUNCTIONS})
endif()
list(REMOVE_DUPLICATES unlisted)
cmake_path(GET EDIT PARENT_PATH lab_dir)
if(implemented AND STUB_FILES)
  list(JOIN implemented ", " implemented)
  message(FATAL_ERROR "the stub ${EDIT} no longer leaves ${implemented} to the student: no "
                      "`throw workbook::NotImplemented(\"...\")` for it. The stub is what students "
                      "start from (the kit exports it, @stub is graded with it). See what changed with "
                      "`git log -p -- ${EDIT}`, restore the TODO (`git checkout <commit> -- ${EDIT}`), "
                      "and write implementations in solutions/ instead.")
endif()
if(unlisted)
  list(JOIN unlisted ", " unlisted)
  message(FATAL_ERROR "${EDIT} throws workbook::NotImplemented for ${unlisted}, which the STUB list "
                      "of workbook_add_lab in ${lab_dir}/CMakeLists.txt does not name: add it there.")
endif()

execute_process(COMMAND "${EXE}" "--gtest_output=json:${OUT}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(DEFINED SKIP_CODE AND rc STREQUAL "${SKIP_CODE}")
  message(STATUS "stub tests skipped: ${out}")
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
