# Lets a plain `ctest` in the source root run the tests of the build configured last, so that
# `cmake --preset lab01 && ctest` works literally. Every configure writes build/last-configured.cmake
# (see workbook_register_last_build in cmake/WorkbookLab.cmake). ctest reads this file from the
# source root, so the paths here are relative to it.
if(EXISTS "build/last-configured.cmake")
  include("build/last-configured.cmake")
else()
  # Nothing configured yet: fail loudly rather than report "no tests" and exit 0.
  add_test(no_build_configured_yet__run__cmake_--preset_lab01__first "/bin/sh" "-c"
    "echo 'No build is configured yet. Run: cmake --preset lab01   (or another preset: cmake --list-presets)'; exit 1")
endif()
