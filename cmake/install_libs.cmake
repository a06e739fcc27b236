# What an application builds against (docs/programming.md, "Building an
# application"): the static libraries and their headers, a CMake package
# (find_package(Outbox CONFIG): Outbox::producer, Outbox::worker,
# Outbox::testing) and pkg-config files (outbox-producer, outbox-worker,
# outbox-testing), installed by `cmake --install` and in the Debian package.
#
# The headers keep the repository's layout under include/outbox/ (core/...,
# worker/...) and include/outbox is the exported include
# folder, so the headers' includes of each other resolve unchanged and an
# application spells an include as this repository does:
# "core/producer/event_store.hpp".
include(CMakePackageConfigHelpers)

set(outbox_libs outbox_base outbox_json outbox_domain outbox_pg outbox_amqp
    outbox_config outbox_producer outbox_core outbox_worker outbox_testing)
set(outbox_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/Outbox")

# A sanitizer build's objects need the sanitizer runtime when linked, and
# outbox_warnings (which brings it here) is not exported: its link flags go
# on the installed targets, so that an application links.
get_target_property(outbox_link_flags outbox_warnings INTERFACE_LINK_OPTIONS)
if(NOT outbox_link_flags)
  set(outbox_link_flags "")
endif()
foreach(lib IN LISTS outbox_libs)
  foreach(flag IN LISTS outbox_link_flags)
    target_link_options(${lib} INTERFACE "$<INSTALL_INTERFACE:${flag}>")
  endforeach()
endforeach()

install(TARGETS ${outbox_libs} EXPORT OutboxTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT OutboxTargets NAMESPACE Outbox:: DESTINATION ${outbox_cmake_dir})

# Every header of the libraries' folders (a public header includes its
# neighbours), the test doubles of core/testing/ among them.
# schema/*.sql is compiled into outbox_pg (core/pg/CMakeLists.txt): no
# generated header exists to install.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/core" "${PROJECT_SOURCE_DIR}/worker"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/outbox
        FILES_MATCHING PATTERN "*.hpp")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/OutboxConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/OutboxConfig.cmake" INSTALL_DESTINATION ${outbox_cmake_dir})
# Before 1.0 a minor release may change the API: 0.1 asks for 0.1.x.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/OutboxConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/OutboxConfig.cmake"
              "${PROJECT_BINARY_DIR}/OutboxConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/FindCAF.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/OutboxRapidJSON.cmake"
        DESTINATION ${outbox_cmake_dir})

# pkg-config: one file per target above. Each requires the one below it,
# so that the static libraries come in link order (pkg-config puts what is
# required after what requires it), and names every library the static
# ones need, as Requires or in Libs (CAF has no .pc file), since an
# application links them all. The prefix is found from the file's own
# place, so an install under any --prefix or DESTDIR works.
file(RELATIVE_PATH outbox_pc_to_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" outbox_pc_to_prefix "${outbox_pc_to_prefix}")
list(JOIN outbox_link_flags " " outbox_pc_link_flags)
function(outbox_pkg_config name description requires libs)
  set(PC_NAME ${name})
  set(PC_DESCRIPTION ${description})
  set(PC_REQUIRES ${requires})
  set(PC_LIBS ${libs})
  configure_file("${PROJECT_SOURCE_DIR}/cmake/outbox.pc.in"
                 "${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc"
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
outbox_pkg_config(outbox-producer
  "Outbox producer API: events in the caller's PostgreSQL transaction"
  "spdlog RapidJSON libpq librabbitmq"
  "-loutbox_producer -loutbox_config -loutbox_pg -loutbox_amqp -loutbox_domain -loutbox_json -loutbox_base -lcaf_core -pthread ${outbox_pc_link_flags}")
outbox_pkg_config(outbox-worker
  "Outbox C++ worker library: runs the jobs of a RabbitMQ queue"
  "outbox-producer = ${PROJECT_VERSION}" "-loutbox_worker")
outbox_pkg_config(outbox-testing
  "Outbox test doubles for an application's tests (fake_event_store)"
  "outbox-producer = ${PROJECT_VERSION}" "-loutbox_testing")
