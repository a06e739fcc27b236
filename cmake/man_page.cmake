# outbox_man_page(<page>): installs a program's manual page (beside its main)
# gzipped as Debian keeps them (-n: no name or time stamp, so that a rebuild
# gives the same bytes). The section is the page's last character.
function(outbox_man_page page)
  string(REGEX MATCH "[0-9]$" section "${page}")
  set(gz "${CMAKE_CURRENT_BINARY_DIR}/${page}.gz")
  add_custom_command(OUTPUT "${gz}"
    COMMAND gzip -9nc "${CMAKE_CURRENT_SOURCE_DIR}/${page}" > "${gz}"
    DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${page}"
    COMMENT "Compressing the manual page ${page}")
  string(MAKE_C_IDENTIFIER "outbox_man_${page}" target)
  add_custom_target(${target} ALL DEPENDS "${gz}")
  install(FILES "${gz}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man${section}")
endfunction()
