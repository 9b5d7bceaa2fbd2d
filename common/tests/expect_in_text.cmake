# expect(TEXT PATTERN) and expect_not(TEXT PATTERN) for the harness's script tests (cmake -P): a
# FATAL_ERROR, quoting TEXT, when PATTERN is missing (or present). CMake wraps its messages, so
# every run of blanks counts as one space on both sides.
function(expect text pattern)
  string(REGEX REPLACE "[ \t\n]+" " " text "${text}")
  string(FIND "${text}" "${pattern}" at)
  if(at LESS 0)
    message(FATAL_ERROR "expected \"${pattern}\" in:\n${text}")
  endif()
endfunction()
function(expect_not text pattern)
  string(REGEX REPLACE "[ \t\n]+" " " text "${text}")
  string(FIND "${text}" "${pattern}" at)
  if(at GREATER_EQUAL 0)
    message(FATAL_ERROR "did not expect \"${pattern}\" in:\n${text}")
  endif()
endfunction()
