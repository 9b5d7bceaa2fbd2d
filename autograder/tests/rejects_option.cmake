# A command-line check: runs PROGRAM with ARGS ('|'-separated) and passes only if it exits with 2
# and its error names OPTION and points to --help (an unknown option is an error, never ignored).
#   cmake -DPROGRAM=... -DARGS="doctor|--bogus|7" -DOPTION=--bogus -P rejects_option.cmake
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(shown "${PROGRAM} ${ARGS}")
if(NOT code EQUAL 2)
  message(FATAL_ERROR "${shown}: exit code ${code}, expected 2 (a usage error)\n${out}${err}")
endif()
string(FIND "${err}" "${OPTION}" named)
string(FIND "${err}" "--help" helped)
if(named EQUAL -1 OR helped EQUAL -1)
  message(FATAL_ERROR "${shown}: the error does not name '${OPTION}' and point to --help:\n${err}")
endif()
