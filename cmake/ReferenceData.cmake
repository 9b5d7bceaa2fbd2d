# The reference data a student kit is judged by, kept in step with the reference it was measured from.
#
# A student kit has no solutions: its perf tests expect the fraction of the roofline the reference
# reached, recorded in labs/NN_*/tests/reference_profile.json, and the lab's handout shows the same
# figures (a table between the two "reference-profile" markers of its README.md). Both are measured,
# so they go stale when the reference changes. The profile records the SHA-256 of each file it was
# measured from (the reference's sources, the local headers they include, the perf cases), and CI
# checks them against the tree.
#
# Script mode (cmake -D... -P cmake/ReferenceData.cmake):
#   MODE=check   the test <lab>.reference_data: fails, naming the changed files and the command to
#                run, when the profile's sources or the handout's table differ from the tree's;
#   MODE=update  (the same test, run by tools/update_reference_data.sh with the environment variable
#                WORKBOOK_UPDATE_REFERENCE_DATA=1): the profile RESULTS the bench build just measured,
#                with its sources' hashes, becomes the lab's tests/reference_profile.json, and the
#                handout's table is written again from it.
# Both take ROOT (the project), FOLDER (the lab's folder under labs/), SOURCES (the files a student
# edits, as workbook_add_lab names them) and PERF (the lab's perf case sources).
cmake_minimum_required(VERSION 3.25)

set(begin_marker "<!-- reference-profile: written by tools/update_reference_data.sh from tests/reference_profile.json -->")
set(end_marker "<!-- reference-profile: end -->")

# The local files (#include "...") that FILE includes, searched beside it, then in each of DIRS.
function(_local_includes file dirs out)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
  cmake_path(GET file PARENT_PATH here)
  set(found "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" name "${line}")
    foreach(dir IN ITEMS "${here}" ${dirs})
      if(EXISTS "${dir}/${name}")
        cmake_path(NORMAL_PATH dir)
        cmake_path(APPEND dir "${name}" OUTPUT_VARIABLE path)
        cmake_path(NORMAL_PATH path)
        list(APPEND found "${path}")
        break()
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# The files the profile was measured from, relative to ROOT, sorted: the reference's SOURCES, the
# perf cases, and every file of the lab or its solution they include. Not the harness's headers,
# nor the lab's correctness oracle, its catalogue of mistakes, its hints and inferences: the perf
# cases include them to check and explain an output, which never changes what is timed (and they
# change with every new diagnosis).
function(_reference_files out)
  set(solution "${ROOT}/solutions/${FOLDER}")
  set(lab "${ROOT}/labs/${FOLDER}")
  set(queue "")
  foreach(s IN LISTS SOURCES)
    list(APPEND queue "${solution}/${s}")
  endforeach()
  foreach(p IN LISTS PERF)
    list(APPEND queue "${lab}/${p}")
  endforeach()
  set(seen "")
  while(queue)
    list(POP_FRONT queue file)
    if(file IN_LIST seen)
      continue()
    endif()
    if(NOT EXISTS "${file}")
      message(FATAL_ERROR "reference data of labs/${FOLDER}: ${file} does not exist (SOURCES and PERF "
                          "are the files of workbook_add_lab in labs/${FOLDER}/CMakeLists.txt)")
    endif()
    list(APPEND seen "${file}")
    _local_includes("${file}" "${solution};${lab}" included)
    foreach(i IN LISTS included)
      cmake_path(IS_PREFIX ROOT "${i}" NORMALIZE inside)
      if(inside AND (i MATCHES "/solutions/${FOLDER}/" OR i MATCHES "/labs/${FOLDER}/")
         AND NOT i MATCHES "_(oracle|mistakes|hints|inference|faults)\\.hpp$")
        list(APPEND queue "${i}")
      endif()
    endforeach()
  endwhile()
  set(relative "")
  foreach(file IN LISTS seen)
    cmake_path(RELATIVE_PATH file BASE_DIRECTORY "${ROOT}" OUTPUT_VARIABLE r)
    list(APPEND relative "${r}")
  endforeach()
  list(SORT relative)
  set(${out} "${relative}" PARENT_SCOPE)
endfunction()

# {"file": "sha256", ...} of those files, as the profile records them.
function(_reference_hashes out)
  _reference_files(files)
  set(object "{}")
  foreach(f IN LISTS files)
    file(SHA256 "${ROOT}/${f}" hash)
    string(JSON object SET "${object}" "${f}" "\"${hash}\"")
  endforeach()
  set(${out} "${object}" PARENT_SCOPE)
endfunction()

# The handout's table of PROFILE (the JSON text of a reference profile), markers included.
function(_handout_table profile out)
  set(md "${begin_marker}\n")
  string(APPEND md "What the kit's perf tests expect of each case (the reference's run, `tests/reference_profile.json`):\n\n")
  string(APPEND md "| perf case | the reference's time | bound by | of that roof | measured on | date |\n")
  string(APPEND md "|---|---|---|---|---|---|\n")
  string(JSON n LENGTH "${profile}" cases)
  math(EXPR last "${n} - 1")
  foreach(k RANGE ${last})
    string(JSON name MEMBER "${profile}" cases ${k})
    foreach(field shown_time bound percent_of_roof measured_on measured_at)
      string(JSON ${field} ERROR_VARIABLE missing GET "${profile}" cases ${name} ${field})
      if(missing)
        set(${out} "" PARENT_SCOPE)  # a profile from before these fields: stale by definition
        return()
      endif()
    endforeach()
    string(SUBSTRING "${measured_at}" 0 10 day)
    string(APPEND md "| `${name}` | ${shown_time} | ${bound} | ${percent_of_roof}% | ${measured_on} | ${day} |\n")
  endforeach()
  string(APPEND md "\n${end_marker}")  # a blank line ends the table for every Markdown reader
  set(${out} "${md}" PARENT_SCOPE)
endfunction()

# The README's text between the markers (markers included), or "" when it has none.
function(_handout_block readme out)
  file(READ "${readme}" text)
  string(FIND "${text}" "${begin_marker}" b)
  string(FIND "${text}" "${end_marker}" e)
  if(b LESS 0 OR e LESS b)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  string(LENGTH "${end_marker}" end_length)
  math(EXPR length "${e} + ${end_length} - ${b}")
  string(SUBSTRING "${text}" ${b} ${length} block)
  set(${out} "${block}" PARENT_SCOPE)
endfunction()

if(DEFINED ENV{WORKBOOK_UPDATE_REFERENCE_DATA})
  set(MODE update)
endif()
foreach(var ROOT FOLDER SOURCES MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ReferenceData.cmake needs -D${var}=...")
  endif()
endforeach()
set(profile_path "${ROOT}/labs/${FOLDER}/tests/reference_profile.json")
set(readme "${ROOT}/labs/${FOLDER}/README.md")
string(SUBSTRING "${FOLDER}" 0 2 number)
set(regenerate "tools/update_reference_data.sh ${number}")
_reference_hashes(hashes)

if(MODE STREQUAL "update")
  if(NOT EXISTS "${RESULTS}")
    message(FATAL_ERROR "${RESULTS} was not written: the profile tests of labs/${FOLDER} did not run (see above)")
  endif()
  file(READ "${RESULTS}" profile)
  string(JSON profile SET "${profile}" reference_sources "${hashes}")
  file(WRITE "${profile_path}" "${profile}\n")
  _handout_table("${profile}" table)
  _handout_block("${readme}" block)
  if(NOT block)
    message(FATAL_ERROR "labs/${FOLDER}/README.md has no table of the reference profile: put these two "
                        "lines where it belongs (in \"How it is graded\"), then run ${regenerate} again:\n"
                        "${begin_marker}\n${end_marker}")
  endif()
  file(READ "${readme}" text)
  string(REPLACE "${block}" "${table}" text "${text}")
  file(WRITE "${readme}" "${text}")
  message(STATUS "wrote labs/${FOLDER}/tests/reference_profile.json and its table in labs/${FOLDER}/README.md")
  return()
endif()

# MODE=check
string(CONCAT next "Measure it again on a quiet machine${GPU_NOTE} and commit what it writes:\n  "
       "${regenerate}\n(it times the reference, then writes "
       "labs/${FOLDER}/tests/reference_profile.json and the table in labs/${FOLDER}/README.md).")
file(READ "${profile_path}" profile)
string(JSON recorded ERROR_VARIABLE none GET "${profile}" reference_sources)
if(none)
  message(FATAL_ERROR "labs/${FOLDER}/tests/reference_profile.json does not say which reference sources "
                      "it was measured from (it predates that record), so it may be stale: a student "
                      "kit's perf tests are judged by it. ${next}")
endif()
set(changed "")
string(JSON n LENGTH "${hashes}")
math(EXPR last "${n} - 1")
foreach(k RANGE ${last})
  string(JSON file MEMBER "${hashes}" ${k})
  string(JSON now GET "${hashes}" "${file}")
  string(JSON then ERROR_VARIABLE absent GET "${recorded}" "${file}")
  if(absent)
    list(APPEND changed "${file} (new)")
  elseif(NOT then STREQUAL now)
    list(APPEND changed "${file}")
  endif()
endforeach()
string(JSON n LENGTH "${recorded}")
if(n GREATER 0)
  math(EXPR last "${n} - 1")
  foreach(k RANGE ${last})
    string(JSON file MEMBER "${recorded}" ${k})
    string(JSON now ERROR_VARIABLE gone GET "${hashes}" "${file}")
    if(gone)
      list(APPEND changed "${file} (no longer part of the reference)")
    endif()
  endforeach()
endif()
if(changed)
  list(JOIN changed ", " changed)
  message(FATAL_ERROR "labs/${FOLDER}/tests/reference_profile.json is stale: it was measured from other "
                      "reference sources than this tree's (changed since: ${changed}). A student kit's "
                      "perf tests are judged by it. ${next}")
endif()
_handout_table("${profile}" table)
_handout_block("${readme}" block)
if(NOT table OR NOT block STREQUAL table)
  message(FATAL_ERROR "labs/${FOLDER}/README.md's table of the reference profile does not show "
                      "tests/reference_profile.json (edited by hand, or the markers are missing). ${next}")
endif()
message(STATUS "labs/${FOLDER}: the reference profile and the handout's table match the reference sources")
