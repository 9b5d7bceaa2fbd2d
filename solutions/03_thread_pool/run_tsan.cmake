# Runs a program built with -fsanitize=thread and judges ThreadSanitizer's verdict.
#   cmake -DEXE=<program> -DEXPECT=clean|race [-DRACE_IN=<file name>] [-DTIMEOUT=<s>] -P run_tsan.cmake
# EXPECT=clean passes when the program succeeds and TSan reports nothing. EXPECT=race passes only
# when TSan reports a data race whose stack names RACE_IN: a sanitizer that stays silent fails it.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 600)
endif()
# Stop at the first report: once a race is reported, what follows is undefined behaviour (a
# lost wake-up can hang the program).
set(ENV{TSAN_OPTIONS} "halt_on_error=1 second_deadlock_stack=1 $ENV{TSAN_OPTIONS}")

function(run_it)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT ${TIMEOUT})
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
endfunction()

run_it("${EXE}")
# GCC 12's TSan cannot map its shadow memory under a kernel that randomises addresses with more
# than 28 bits (vm.mmap_rnd_bits, 32 on some recent distributions): run it again without ASLR.
if(out MATCHES "unexpected memory mapping")
  execute_process(COMMAND uname -m OUTPUT_VARIABLE arch OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "ThreadSanitizer could not map its shadow memory here; running again with ASLR off (setarch -R)")
  run_it(setarch "${arch}" -R "${EXE}")
endif()

string(REGEX MATCH "SUMMARY: ThreadSanitizer: [^\n]*" summary "${out}")
if(EXPECT STREQUAL "clean")
  if(out MATCHES "WARNING: ThreadSanitizer")
    message(FATAL_ERROR "ThreadSanitizer found a problem (${summary}). Its report shows the two "
                        "unordered accesses and their threads:\n${out}")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the program failed under ThreadSanitizer (exit ${rc}):\n${out}")
  endif()
  message(STATUS "ThreadSanitizer reported nothing")
elseif(EXPECT STREQUAL "race")
  if(NOT out MATCHES "WARNING: ThreadSanitizer: data race")
    message(FATAL_ERROR "ThreadSanitizer did not report the race planted in ${RACE_IN} (exit ${rc}): "
                        "is the program built with -fsanitize=thread?\n${out}")
  endif()
  if(NOT out MATCHES "${RACE_IN}")
    message(FATAL_ERROR "ThreadSanitizer reported a race, but not in ${RACE_IN}:\n${out}")
  endif()
  message(STATUS "ThreadSanitizer caught the race planted in ${RACE_IN}: ${summary}")
else()
  message(FATAL_ERROR "run_tsan.cmake: EXPECT must be clean or race, not '${EXPECT}'")
endif()
