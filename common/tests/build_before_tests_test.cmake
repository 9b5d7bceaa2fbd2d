# cmake/BuildBeforeTests.cmake on a project that does not compile: what a plain `ctest` shows is the
# compiler's first error, its source line, and the file and line to fix; a project that compiles
# adds at most one line (with Ninja: that it builds, and how many steps) to ctest's output. Usage: cmake -DWORK=<empty folder> -DSCRIPT=<BuildBeforeTests.cmake> -P <this file>
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/src/labs/07_example")
file(WRITE "${WORK}/src/CMakeLists.txt"
  "cmake_minimum_required(VERSION 3.25)\nproject(example CXX)\nadd_library(kernel STATIC labs/07_example/kernel.cpp)\n")
file(WRITE "${WORK}/src/labs/07_example/kernel.cpp"
  "#include <vector>\nint twice(int x) {\n  std::vector<int> v{x, x};\n  return v[0] + v[1] + undeclared_name;\n}\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${WORK}/src" -B "${WORK}/build" RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the example project did not configure")
endif()
# Through ctest itself, as a student runs it: ctest reads the script with its tests (where, unlike
# in cmake -P, CMAKE_COMMAND is not defined).
file(MAKE_DIRECTORY "${WORK}/tests")
file(WRITE "${WORK}/tests/CTestTestfile.cmake"
  "set(WORKBOOK_BUILD_DIR \"${WORK}/build\")\nset(WORKBOOK_SOURCE_DIR \"${WORK}/src\")\n"
  "set(WORKBOOK_CMAKE \"${CMAKE_COMMAND}\")\ninclude(\"${SCRIPT}\")\n"
  "add_test(nothing \"${CMAKE_COMMAND}\" -E true)\n")
function(run_script out)
  execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" WORKING_DIRECTORY "${WORK}/tests"
                  OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

run_script(text)
foreach(expected "The build failed, so the tests cannot run"
                 "kernel.cpp:4:"
                 "undeclared_name"
                 "return v[0] + v[1] + undeclared_name;"
                 "Fix it in labs/07_example/kernel.cpp (line 4), then run ctest again.")
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the failed build's message lacks '${expected}'. It said:\n${text}")
  endif()
endforeach()

file(WRITE "${WORK}/src/labs/07_example/kernel.cpp" "int twice(int x) { return 2 * x; }\n")
run_script(text)
if(text MATCHES "build failed|error|=====")
  message(FATAL_ERROR "a build that succeeds should add nothing to ctest's output, but ctest said:\n${text}")
endif()

# With Ninja (the presets' generator), a build with work to do says so first, in one line (the first
# build takes minutes in silence otherwise); an up-to-date one adds nothing.
find_program(ninja ninja)
if(ninja)
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${WORK}/src" -B "${WORK}/ninja-build" -G Ninja
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  file(MAKE_DIRECTORY "${WORK}/ninja-tests")
  file(WRITE "${WORK}/ninja-tests/CTestTestfile.cmake"
    "set(WORKBOOK_BUILD_DIR \"${WORK}/ninja-build\")\nset(WORKBOOK_SOURCE_DIR \"${WORK}/src\")\n"
    "set(WORKBOOK_CMAKE \"${CMAKE_COMMAND}\")\ninclude(\"${SCRIPT}\")\n"
    "add_test(nothing \"${CMAKE_COMMAND}\" -E true)\n")
  foreach(round first again)
    execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" WORKING_DIRECTORY "${WORK}/ninja-tests"
                    OUTPUT_VARIABLE text ERROR_VARIABLE text)
    string(FIND "${text}" "ctest: building ${WORK}/ninja-build before the tests: 2 steps" at)
    if(round STREQUAL "first" AND at EQUAL -1)
      message(FATAL_ERROR "a build with work to do should say so first, but ctest said:\n${text}")
    elseif(round STREQUAL "again" AND NOT at EQUAL -1)
      message(FATAL_ERROR "an up-to-date build should add nothing, but ctest said:\n${text}")
    endif()
  endforeach()
endif()
message(STATUS "a compile error is shown with its line and the file to fix; a good build says only "
               "that it builds, and how many steps (with Ninja), and an up-to-date one nothing")
