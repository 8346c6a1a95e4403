# Debian's libmetis-dev ships neither a CMake package nor a pkg-config file.
find_path(METIS_INCLUDE_DIR metis.h)
find_library(METIS_LIBRARY metis)
if(METIS_INCLUDE_DIR)
  file(STRINGS "${METIS_INCLUDE_DIR}/metis.h" _metis_version_lines
       REGEX "#define METIS_VER_(MAJOR|MINOR|SUBMINOR)")
  foreach(_part MAJOR MINOR SUBMINOR)
    string(REGEX REPLACE ".*METIS_VER_${_part}[ \t]+([0-9]+).*" "\\1" _metis_${_part}
           "${_metis_version_lines}")
  endforeach()
  set(METIS_VERSION "${_metis_MAJOR}.${_metis_MINOR}.${_metis_SUBMINOR}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(METIS REQUIRED_VARS METIS_LIBRARY METIS_INCLUDE_DIR
                                  VERSION_VAR METIS_VERSION)
if(METIS_FOUND AND NOT TARGET METIS::metis)
  add_library(METIS::metis UNKNOWN IMPORTED)
  set_target_properties(METIS::metis PROPERTIES IMPORTED_LOCATION "${METIS_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${METIS_INCLUDE_DIR}")
endif()
