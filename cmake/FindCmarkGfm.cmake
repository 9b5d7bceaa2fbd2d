# Finds cmark-gfm, GitHub's CommonMark library with its table extension, as Debian 12 ships it
# (libcmark-gfm-dev, libcmark-gfm-extensions-dev): headers and libraries, no CMake package of its
# own (its pkg-config file is not used, so that a CMAKE_PREFIX_PATH copy without pkg-config works,
# as autograder/selftest/gpu_deps.sh gathers one). The grader's reports are GitHub-flavoured
# Markdown (pipe tables); plain cmark (libcmark-dev, 0.30) renders those tables as paragraphs of
# pipes and has no plain-text renderer.
# Defines CmarkGfm::CmarkGfm (the extensions library and the core it loads) and CmarkGfm_VERSION.
find_path(CmarkGfm_INCLUDE_DIR cmark-gfm-core-extensions.h)
find_library(CmarkGfm_LIBRARY NAMES cmark-gfm)
find_library(CmarkGfm_EXTENSIONS_LIBRARY NAMES cmark-gfm-extensions)
if(CmarkGfm_INCLUDE_DIR AND EXISTS "${CmarkGfm_INCLUDE_DIR}/cmark-gfm_version.h")
  file(STRINGS "${CmarkGfm_INCLUDE_DIR}/cmark-gfm_version.h" version_line REGEX "CMARK_GFM_VERSION_STRING")
  string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" CmarkGfm_VERSION "${version_line}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CmarkGfm
  REQUIRED_VARS CmarkGfm_EXTENSIONS_LIBRARY CmarkGfm_LIBRARY CmarkGfm_INCLUDE_DIR
  VERSION_VAR CmarkGfm_VERSION)
mark_as_advanced(CmarkGfm_INCLUDE_DIR CmarkGfm_LIBRARY CmarkGfm_EXTENSIONS_LIBRARY)
if(CmarkGfm_FOUND AND NOT TARGET CmarkGfm::CmarkGfm)
  add_library(CmarkGfm::core UNKNOWN IMPORTED)
  set_target_properties(CmarkGfm::core PROPERTIES IMPORTED_LOCATION "${CmarkGfm_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${CmarkGfm_INCLUDE_DIR}")
  add_library(CmarkGfm::CmarkGfm UNKNOWN IMPORTED)
  set_target_properties(CmarkGfm::CmarkGfm PROPERTIES IMPORTED_LOCATION "${CmarkGfm_EXTENSIONS_LIBRARY}"
                        INTERFACE_LINK_LIBRARIES CmarkGfm::core)
endif()
