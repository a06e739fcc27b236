# RapidJSON as a target, Outbox::RapidJSON. Debian's RapidJSON 1.1 config
# only sets RAPIDJSON_INCLUDE_DIRS; outbox_json's headers include RapidJSON,
# and its exported target must name a target rather than a folder of the
# machine it was built on. The build and the installed OutboxConfig.cmake
# both make it from the variable. Imported, so its headers are system
# headers for every consumer (no warnings from them under -Werror).
if(NOT TARGET Outbox::RapidJSON)
  add_library(Outbox::RapidJSON INTERFACE IMPORTED)
  set_target_properties(Outbox::RapidJSON PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${RAPIDJSON_INCLUDE_DIRS}")
endif()
