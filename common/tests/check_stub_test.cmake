# cmake/CheckStub.cmake on a stub of its own: it passes when the stub throws NotImplemented for
# exactly its STUB list and the tests fail naming them; it fails, naming the function and the
# file, when a listed function was implemented in the stub (an instructor trying the lab in the
# course's clone), and when the stub throws for a function its STUB list does not name.
# Usage: cmake -DWORK=<empty folder> -DSCRIPT=<CheckStub.cmake> -P <this file>
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(stub "${WORK}/ops.cpp")
# The lab's test executable on the stub: one failure, as GoogleTest reports it.
file(WRITE "${WORK}/tests.sh" [=[#!/bin/sh
json=${1#--gtest_output=json:}
cat > "$json" <<'END'
{"testsuites": [{"name": "Relu", "testsuite": [{"name": "A", "failures": [{"failure": "not implemented yet: implement relu in labs/01_x/ops.cpp"}]}]}]}
END
echo "not implemented yet: implement relu in labs/01_x/ops.cpp"
exit 1
]=])
file(CHMOD "${WORK}/tests.sh" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)

function(check_stub functions out)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DEXE=${WORK}/tests.sh" -DEDIT=labs/01_x/ops.cpp
                          "-DOUT=${WORK}/out.json" "-DFUNCTIONS=${functions}" "-DSTUB_FILES=${stub}" -P "${SCRIPT}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out} "${rc}: ${text}" PARENT_SCOPE)
endfunction()
include("${CMAKE_CURRENT_LIST_DIR}/expect_in_text.cmake")

file(WRITE "${stub}" "void relu() {\n  throw workbook::NotImplemented(\"relu\");\n}\n"
                     "void add() { throw workbook::NotImplemented(\"add\"); }\n")
check_stub("relu;add" out)
expect("${out}" "0: ")
expect("${out}" "tests fail with 'not implemented yet")

file(WRITE "${stub}" "void relu() {\n  for (;;) {}\n}\nvoid add() { throw workbook::NotImplemented(\"add\"); }\n")
check_stub("relu;add" out)
expect("${out}" "the stub labs/01_x/ops.cpp no longer leaves relu to the student")
expect("${out}" "git log -p -- labs/01_x/ops.cpp")

file(WRITE "${stub}" "void relu() { throw workbook::NotImplemented(\"relu\"); }\n"
                     "void add() { throw workbook::NotImplemented(\"add\"); }\n")
check_stub("relu" out)
expect("${out}" "labs/01_x/ops.cpp throws workbook::NotImplemented for add, which the STUB list")
expect("${out}" "labs/01_x/CMakeLists.txt")
message(STATUS "stub check: exact STUB list, an implemented stub, an unlisted function: as expected")
