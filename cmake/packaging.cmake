# What `cmake --install` and the Debian package (`cpack -G DEB` in the build
# folder) hold besides the binaries (each program's folder in tools/, with its manual page; clients/python/) and the libraries
# for applications (cmake/install_libs.cmake): the systemd
# units and their system user, an example config as /etc/outbox/outbox.json
# (a conffile: an upgrade keeps the host's edits), the layout of the
# three-host example and an example Prometheus config with alert rules. The migrations are compiled into the binaries
# (core/pg/CMakeLists.txt), so no SQL is installed. The units name
# /usr/bin/outboxd: the package's prefix, /usr.
set(outbox_deploy "${PROJECT_SOURCE_DIR}/deploy")
install(FILES "${outbox_deploy}/outboxd@.service" "${outbox_deploy}/outbox.target"
        DESTINATION lib/systemd/system)
install(FILES "${outbox_deploy}/outbox.sysusers" DESTINATION lib/sysusers.d RENAME outbox.conf)
# Absolute on purpose: a package's config lives in /etc, not under /usr
# (a plain `cmake --install` writes it there too, unless DESTDIR is set).
install(FILES "${outbox_deploy}/outbox.json" DESTINATION /etc/outbox)
install(FILES "${PROJECT_SOURCE_DIR}/config/cluster-3hosts.conf"
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES "${outbox_deploy}/prometheus/prometheus.yml"
              "${outbox_deploy}/prometheus/outbox-alerts.yml"
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/prometheus)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME outbox)
set(CPACK_PACKAGE_CONTACT "Outbox maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "transactional outbox relay for PostgreSQL and RabbitMQ (outboxd, outboxctl, C++ libraries)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# The runtime libraries' packages (libcaf-*, libpq5, librabbitmq4,
# libspdlog1.10, ...) as dpkg-shlibdeps finds them from the binaries, so the
# list cannot drift from what is linked.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The -dev packages are what an application built against the installed
# headers and static libraries needs (find_package(Outbox) finds them); a
# relay host needs none of them, so they are only suggested.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "python3-pika, python3-psycopg2, libcaf-dev, libpq-dev, librabbitmq-dev, libspdlog-dev, rapidjson-dev")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${outbox_deploy}/debian/conffiles;${outbox_deploy}/debian/postinst;${outbox_deploy}/debian/prerm;${outbox_deploy}/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
