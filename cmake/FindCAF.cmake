# Finds CAF 0.17 (Debian's libcaf-dev ships no CMake package config or .pc
# file) and defines the imported targets caf::core, caf::io, caf::openssl.
find_path(CAF_INCLUDE_DIR caf/all.hpp)
find_library(CAF_CORE_LIB caf_core)
find_library(CAF_IO_LIB caf_io)
find_library(CAF_OPENSSL_LIB caf_openssl)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIB CAF_IO_LIB CAF_OPENSSL_LIB
  FAIL_MESSAGE "CAF 0.17 not found: install Debian's libcaf-dev (apt-get install libcaf-dev)")

if(CAF_FOUND AND NOT TARGET caf::core)
  find_package(Threads REQUIRED)
  add_library(caf::core INTERFACE IMPORTED)
  set_target_properties(caf::core PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${CAF_CORE_LIB};Threads::Threads")
  add_library(caf::io INTERFACE IMPORTED)
  set_target_properties(caf::io PROPERTIES
    INTERFACE_LINK_LIBRARIES "${CAF_IO_LIB};caf::core")
  add_library(caf::openssl INTERFACE IMPORTED)
  set_target_properties(caf::openssl PROPERTIES
    INTERFACE_LINK_LIBRARIES "${CAF_OPENSSL_LIB};caf::io")
endif()
