# Runs one buggy implementation (solutions/NN_*/mistakes/<name>) against the test that must catch
# it, and checks what the student would read: the test fails, its message contains every
# '// Expect: ' line of the source, and nothing matches FORBID (a regex: words that do not belong
# to the lab, such as SIMD batches in a CUDA lab). See workbook_add_mistakes in WorkbookLab.cmake.
# Usage: cmake -DEXE=<program> -DSOURCE=<mistake source> [-DFORBID=<regex>] [-DSKIP_CODE=77]
#        -P CheckMistake.cmake
file(STRINGS "${SOURCE}" checked_by REGEX "^// Checked by: ")
file(STRINGS "${SOURCE}" expects REGEX "^// Expect: ")
string(REGEX REPLACE "^// Checked by: *" "" filter "${checked_by}")
string(STRIP "${filter}" filter)
cmake_path(GET SOURCE FILENAME name)

execute_process(COMMAND "${EXE}" "--gtest_filter=${filter}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(DEFINED SKIP_CODE AND rc STREQUAL "${SKIP_CODE}")
  message(STATUS "${out}")  # "no CUDA device: skipped": the test's SKIP_REGULAR_EXPRESSION
  return()
endif()
if(out MATCHES "0 tests, listed below|Running 0 tests")
  message(FATAL_ERROR "${name}: '${filter}' names no test of the lab:\n${out}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${name}: the mistake was not caught: ${filter} passed.\n${out}")
endif()
# A crash is reported by the test main (workbook::testing, exit code 3) and checked like any
# failure; a death by signal here means that report is missing (or a sanitizer build's own).
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${name}: ${filter} died (${rc}) without the test main's crash report:\n${out}")
endif()
set(missing "")
foreach(line IN LISTS expects)
  string(REGEX REPLACE "^// Expect: *" "" expect "${line}")
  string(STRIP "${expect}" expect)
  string(FIND "${out}" "${expect}" at)
  if(at EQUAL -1)
    string(APPEND missing "\n  '${expect}'")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "${name}: ${filter} failed, but its message lacks:${missing}\nIt said:\n${out}")
endif()
if(FORBID AND out MATCHES "${FORBID}")
  message(FATAL_ERROR "${name}: the message speaks of '${CMAKE_MATCH_0}', which does not belong to this lab:\n${out}")
endif()
message(STATUS "${name}: caught by ${filter}, with the expected diagnosis")
