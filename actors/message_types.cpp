#include "actors/message_types.hpp"

#include "actors/status_actor.hpp"

namespace outbox {

void register_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<actor_metrics>("outbox::actor_metrics");
  cfg.add_message_type<std::vector<actor_metrics>>(
    "std::vector<outbox::actor_metrics>");
  cfg.add_message_type<node_info>("outbox::node_info");
  cfg.add_message_type<cluster_status>("outbox::cluster_status");
  cfg.add_message_type<node_report>("outbox::node_report");
  cfg.add_message_type<std::map<std::string, int64_t>>(
    "std::map<std::string,int64_t>");
  cfg.add_message_type<lifecycle_event>("outbox::lifecycle_event");
  cfg.add_message_type<leader_map>("outbox::leader_map");
}

} // namespace outbox
