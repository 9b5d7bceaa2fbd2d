# cmake/ReferenceData.cmake on a lab of its own: the update writes the profile with the hashes of
# the reference's files (its sources, the lab's and solution's headers they include, the perf
# cases; not the harness's, nor the oracle's) and the handout's table; the check passes on that, and fails, naming
# the file and the command that regenerates it, after a reference header changes, after the table
# is edited by hand, and on a profile from before the hashes.
# Usage: cmake -DWORK=<empty folder> -DSCRIPT=<ReferenceData.cmake> -P <this file>
file(REMOVE_RECURSE "${WORK}")
set(root "${WORK}/root")
file(WRITE "${root}/solutions/01_x/ops.cpp" "#include \"blocking.hpp\"\n#include <workbook/check.hpp>\n#include \"ops.hpp\"\nvoid relu() {}\n")
file(WRITE "${root}/solutions/01_x/blocking.hpp" "#pragma once\nconstexpr int kBlock = 64;\n")
file(WRITE "${root}/labs/01_x/ops.hpp" "#pragma once\nvoid relu();\n")
file(WRITE "${root}/labs/01_x/tests/perf_cases.cpp" "#include \"ops.hpp\"\n#include \"ops_oracle.hpp\"\n")
file(WRITE "${root}/labs/01_x/tests/ops_oracle.hpp" "#pragma once\n")  # checks outputs: not timed
file(WRITE "${root}/labs/01_x/README.md"
  "# Lab\n\n## How it is graded\n\n"
  "<!-- reference-profile: written by tools/update_reference_data.sh from tests/reference_profile.json -->\n"
  "<!-- reference-profile: end -->\n\nAfter.\n")
file(WRITE "${WORK}/measured.json" [=[{
  "cases": {
    "relu": {"bound": "memory", "fraction_of_roof": 0.981, "measured_at": "2026-11-27T07:00:00Z",
             "measured_on": "Some CPU, avx512bw", "percent_of_roof": 98, "seconds": 0.0133,
             "shown_time": "13.3 ms"}
  },
  "format": 1,
  "lab": "lab01"
}]=])

function(reference_data mode out)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DMODE=${mode} "-DROOT=${root}" -DFOLDER=01_x -DSOURCES=ops.cpp
                          -DPERF=tests/perf_cases.cpp "-DRESULTS=${WORK}/measured.json" -P "${SCRIPT}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out} "${rc}: ${text}" PARENT_SCOPE)
endfunction()
include("${CMAKE_CURRENT_LIST_DIR}/expect_in_text.cmake")

# Update, then the check passes.
reference_data(update out)
expect("${out}" "0: ")
file(READ "${root}/labs/01_x/tests/reference_profile.json" profile)
foreach(file solutions/01_x/ops.cpp solutions/01_x/blocking.hpp labs/01_x/ops.hpp labs/01_x/tests/perf_cases.cpp)
  string(JSON hash GET "${profile}" reference_sources "${file}")
  file(SHA256 "${root}/${file}" expected)
  if(NOT hash STREQUAL expected)
    message(FATAL_ERROR "${file}: recorded ${hash}, expected ${expected}")
  endif()
endforeach()
string(JSON n LENGTH "${profile}" reference_sources)
if(NOT n EQUAL 4)
  message(FATAL_ERROR "4 reference files expected (none of the harness's), got ${n}:\n${profile}")
endif()
file(READ "${root}/labs/01_x/README.md" readme)
expect("${readme}" "| `relu` | 13.3 ms | memory | 98% | Some CPU, avx512bw | 2026-11-27 |")
string(FIND "${readme}" "<!-- reference-profile: end -->\n\nAfter.\n" at)
if(at LESS 0)
  message(FATAL_ERROR "the text after the table changed:\n${readme}")
endif()
reference_data(check out)
expect("${out}" "0: ")

# A reference header changes: stale, naming it and the command.
file(APPEND "${root}/solutions/01_x/blocking.hpp" "constexpr int kOther = 8;\n")
reference_data(check out)
expect_not("${out}" "0: ")
expect("${out}" "changed since: solutions/01_x/blocking.hpp")
expect_not("${out}" "ops.cpp")
expect("${out}" "tools/update_reference_data.sh 01")

# Updated again, then the table edited by hand.
reference_data(update out)
reference_data(check out)
expect("${out}" "0: ")
string(REPLACE "13.3 ms" "9 ms" edited "${readme}")
file(WRITE "${root}/labs/01_x/README.md" "${edited}")
reference_data(check out)
expect("${out}" "README.md's table of the reference profile does not show")

# A profile from before the hashes.
file(WRITE "${root}/labs/01_x/tests/reference_profile.json" "{\"cases\": {}, \"format\": 1}")
reference_data(check out)
expect("${out}" "does not say which reference sources")
message(STATUS "reference data: update, check, stale source, edited table, old profile: as expected")
