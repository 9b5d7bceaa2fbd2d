# Writes the self-test's submissions, whole, into a folder of the build tree. A submission that is
# the reference (or the stub) with one mistake is stored as that mistake alone: its base.json names
# the trusted files it starts from and the patches that make it, so it reads as what it gets wrong,
# and a change to the reference reaches it. Every other file of its folder (expected.json, files of
# its own) is copied as it is; a folder without base.json is copied whole.
#   base.json: {"from": "solutions/04_int8_quantization", "files": ["quantize.cpp", ...],
#               "copy": {"labs/02_matmul/forge.hpp": "../../shared/forge.hpp"},
#               "patches": ["mistake.patch"]}
#   - from, files: each of from/files (from the trusted tree) into labs/<from's folder name>/;
#   - copy: a file shared by several submissions (path relative to the submission's folder) to the
#     path before it, in the submission;
#   - patches, in order (paths relative to the submission's folder): unified diffs of a/labs/...
#     and b/labs/..., applied with GNU patch -p1, exactly: no fuzz, so a reference changed where a
#     patch touches it stops here, naming the patch.
# Usage (ctest runs it as autograder.selftest_submissions; gpu_check.sh too):
#   cmake -DSUBMISSIONS=autograder/selftest/submissions -DTRUSTED=. -DOUT=build/x [-DNAMES=a;b]
#         -P autograder/selftest/materialise.cmake
foreach(v SUBMISSIONS TRUSTED OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "materialise.cmake needs -D${v}=...: see its first lines for the usage")
  endif()
  get_filename_component(${v} "${${v}}" ABSOLUTE)  # relative: to the current folder
endforeach()
find_program(PATCH_PROGRAM patch)
if(NOT PATCH_PROGRAM)
  message(FATAL_ERROR "GNU patch is not installed, and the self-test's submissions are stored as "
                      "patches (${SUBMISSIONS}/*/base.json): install it (sudo apt-get install patch)")
endif()
if(NOT DEFINED NAMES)
  file(GLOB NAMES RELATIVE "${SUBMISSIONS}" "${SUBMISSIONS}/*")
endif()
list(SORT NAMES)

# json_list(<out> <json> <key>): the array at key, as a CMake list (empty when there is none).
function(json_list out json key)
  set(items "")
  string(JSON count ERROR_VARIABLE error LENGTH "${json}" ${key})
  if(NOT error AND count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON item GET "${json}" ${key} ${i})
      list(APPEND items "${item}")
    endforeach()
  endif()
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

# copy_file_to(<file> <path>): file, copied to path (a file name, not a folder).
function(copy_file_to file path)
  get_filename_component(folder "${path}" DIRECTORY)
  file(MAKE_DIRECTORY "${folder}")
  configure_file("${file}" "${path}" COPYONLY)
endfunction()

foreach(name IN LISTS NAMES)
  set(source "${SUBMISSIONS}/${name}")
  set(dest "${OUT}/${name}")
  if(NOT IS_DIRECTORY "${source}")
    continue()
  endif()
  file(REMOVE_RECURSE "${dest}")
  file(MAKE_DIRECTORY "${dest}")
  if(NOT EXISTS "${source}/base.json")
    file(COPY "${source}/" DESTINATION "${dest}")
    continue()
  endif()
  file(READ "${source}/base.json" base)

  string(JSON from ERROR_VARIABLE no_from GET "${base}" from)
  json_list(files "${base}" files)
  if(NOT no_from)
    get_filename_component(lab_folder "${from}" NAME)
    if(NOT files)
      message(FATAL_ERROR "${source}/base.json names \"from\": \"${from}\" but no \"files\" to "
                          "copy from it: list them, as the other submissions' base.json do.")
    endif()
    foreach(file IN LISTS files)
      if(NOT EXISTS "${TRUSTED}/${from}/${file}")
        message(FATAL_ERROR "${source}/base.json names ${from}/${file}, which is not in ${TRUSTED}: "
                            "was it renamed? Name its new path in base.json and remake the patch.")
      endif()
      copy_file_to("${TRUSTED}/${from}/${file}" "${dest}/labs/${lab_folder}/${file}")
    endforeach()
  endif()

  string(JSON copies ERROR_VARIABLE no_copy GET "${base}" copy)
  if(NOT no_copy)
    string(JSON count LENGTH "${copies}")
    if(count GREATER 0)
      math(EXPR last "${count} - 1")
      foreach(i RANGE ${last})
        string(JSON to MEMBER "${copies}" ${i})
        string(JSON shared GET "${copies}" "${to}")
        get_filename_component(shared "${shared}" ABSOLUTE BASE_DIR "${source}")
        if(NOT EXISTS "${shared}")
          message(FATAL_ERROR "${source}/base.json copies ${shared}, which is not there: was it "
                              "renamed? Name its new path in base.json.")
        endif()
        copy_file_to("${shared}" "${dest}/${to}")
      endforeach()
    endif()
  endif()

  # The submission's own files (expected.json, a file of its own), not its recipe.
  file(GLOB own RELATIVE "${source}" "${source}/*")
  foreach(f IN LISTS own)
    if(NOT f STREQUAL "base.json" AND NOT f MATCHES "\\.patch$")
      file(COPY "${source}/${f}" DESTINATION "${dest}")
    endif()
  endforeach()

  json_list(patches "${base}" patches)
  foreach(patch IN LISTS patches)
    get_filename_component(patch "${patch}" ABSOLUTE BASE_DIR "${source}")
    execute_process(
      COMMAND "${PATCH_PROGRAM}" --batch --forward --fuzz=0 --no-backup-if-mismatch --reject-file=-
              -p1 -d "${dest}" -i "${patch}"
      RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT code EQUAL 0)
      file(REMOVE_RECURSE "${dest}")  # half-made: nothing may grade it
      message(FATAL_ERROR
        "The self-test submission ${name}: its patch ${patch} does not apply to ${from} as it is "
        "now (patch exited with ${code}):\n${out}\n"
        "The reference or stub changed where the patch touches it. Remake the patch against it: "
        "apply the old one by hand in a copy of the new files, then `diff -u` (labels "
        "a/labs/<lab>/<file> and b/labs/<lab>/<file>) into ${patch}, and check the submission "
        "still grades as its expected.json says (ctest -R autograder.grade.${name}).")
    endif()
  endforeach()
endforeach()
