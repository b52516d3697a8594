# FindCAF: locates CAF 0.17.6 as installed by Debian's libcaf-dev, which ships
# no CMake config and no pkg-config file.
#
# Components: core (always), io, openssl. Defines CAF_FOUND, CAF_VERSION and the
# IMPORTED targets CAF::core, CAF::io, CAF::openssl.

find_package(Threads REQUIRED)

find_path(CAF_INCLUDE_DIR NAMES caf/config.hpp)
if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE ".*CAF_VERSION ([0-9]+).*" "\\1" caf_v "${caf_version_line}")
  math(EXPR caf_major "${caf_v} / 10000")
  math(EXPR caf_minor "(${caf_v} / 100) % 100")
  math(EXPR caf_patch "${caf_v} % 100")
  set(CAF_VERSION "${caf_major}.${caf_minor}.${caf_patch}")
endif()

set(caf_components core ${CAF_FIND_COMPONENTS})
list(REMOVE_DUPLICATES caf_components)
set(caf_required_vars CAF_INCLUDE_DIR)
foreach(comp IN LISTS caf_components)
  find_library(CAF_${comp}_LIBRARY NAMES caf_${comp})
  list(APPEND caf_required_vars CAF_${comp}_LIBRARY)
  if(CAF_${comp}_LIBRARY)
    set(CAF_${comp}_FOUND TRUE)
  endif()
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS ${caf_required_vars}
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)

foreach(comp IN LISTS caf_components)
  if(CAF_${comp}_FOUND AND NOT TARGET CAF::${comp})
    add_library(CAF::${comp} UNKNOWN IMPORTED)
    set_target_properties(CAF::${comp} PROPERTIES
      IMPORTED_LOCATION "${CAF_${comp}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES Threads::Threads)
  endif()
endforeach()
if(TARGET CAF::io)
  set_property(TARGET CAF::io APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::core)
endif()
if(TARGET CAF::openssl)
  find_package(OpenSSL REQUIRED)
  set_property(TARGET CAF::openssl APPEND PROPERTY
               INTERFACE_LINK_LIBRARIES CAF::io OpenSSL::SSL)
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_core_LIBRARY CAF_io_LIBRARY CAF_openssl_LIBRARY)
