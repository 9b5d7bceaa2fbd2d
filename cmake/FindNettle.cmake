# Finds Nettle, the cryptographic library Debian 12 ships as nettle-dev (headers, libnettle.so) and
# libnettle8 (the library; libarchive13 already loads it). The grader hashes file contents with its
# SHA-256. find_path and find_library rather than pkg-config, so that a CMAKE_PREFIX_PATH copy without
# pkg-config works, as autograder/selftest/gpu_deps.sh gathers one.
# Defines Nettle::Nettle and Nettle_VERSION.
find_path(Nettle_INCLUDE_DIR nettle/sha2.h)
find_library(Nettle_LIBRARY NAMES nettle)
if(Nettle_INCLUDE_DIR AND EXISTS "${Nettle_INCLUDE_DIR}/nettle/version.h")
  file(STRINGS "${Nettle_INCLUDE_DIR}/nettle/version.h" major REGEX "#define NETTLE_VERSION_MAJOR")
  file(STRINGS "${Nettle_INCLUDE_DIR}/nettle/version.h" minor REGEX "#define NETTLE_VERSION_MINOR")
  string(REGEX REPLACE ".*MAJOR[ \t]+([0-9]+).*" "\\1" major "${major}")
  string(REGEX REPLACE ".*MINOR[ \t]+([0-9]+).*" "\\1" minor "${minor}")
  set(Nettle_VERSION "${major}.${minor}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Nettle REQUIRED_VARS Nettle_LIBRARY Nettle_INCLUDE_DIR VERSION_VAR Nettle_VERSION)
mark_as_advanced(Nettle_INCLUDE_DIR Nettle_LIBRARY)
if(Nettle_FOUND AND NOT TARGET Nettle::Nettle)
  add_library(Nettle::Nettle UNKNOWN IMPORTED)
  set_target_properties(Nettle::Nettle PROPERTIES IMPORTED_LOCATION "${Nettle_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${Nettle_INCLUDE_DIR}")
endif()
