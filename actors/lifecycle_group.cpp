#include "actors/lifecycle_group.hpp"

#include <caf/send.hpp>

namespace outbox {

const char* const lifecycle_group_name = "outbox.lifecycle";

caf::group lifecycle_group(caf::actor_system& sys) {
  return sys.groups().get_local(lifecycle_group_name);
}

lifecycle_observer lifecycle_forwarder(caf::actor_system& sys) {
  return [g = lifecycle_group(sys)](const lifecycle_event& ev) {
    caf::anon_send(g, ev);
  };
}

} // namespace outbox
