# Debian's multiarch library folder (lib/x86_64-linux-gnu) for the installed
# libraries and their CMake and pkg-config files. GNUInstallDirs picks it
# only when CMAKE_INSTALL_PREFIX is /usr at configure time, but the package
# installs to /usr whatever the build's prefix (cmake/packaging.cmake), and
# `cmake --install --prefix` may name any folder: ask for it on a multiarch
# system. A value that GNUInstallDirs cached in an older build folder (its
# help string says so) is replaced; one the user gave is kept.
if(CMAKE_LIBRARY_ARCHITECTURE)
  get_property(outbox_libdir_help CACHE CMAKE_INSTALL_LIBDIR PROPERTY HELPSTRING)
  if(NOT DEFINED CACHE{CMAKE_INSTALL_LIBDIR}
     OR outbox_libdir_help STREQUAL "Object code libraries (lib)")
    set(CMAKE_INSTALL_LIBDIR "lib/${CMAKE_LIBRARY_ARCHITECTURE}" CACHE PATH
        "Object code libraries (lib/<multiarch>)" FORCE)
  endif()
endif()
