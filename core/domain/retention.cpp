#include "core/domain/retention.hpp"

#include <algorithm>

namespace outbox {

double retention_policy::hours_of(delivery_status s) const {
  switch (s) {
    case delivery_status::completed:
      return completed_hours;
    case delivery_status::superseded:
      return superseded_hours;
    case delivery_status::failed:
      return failed_hours;
    case delivery_status::expired:
      return expired_hours;
    case delivery_status::pending:
    case delivery_status::dispatched:
      break;
  }
  return 0; // an open delivery is never deleted
}

double retention_policy::longest_hours() const {
  return std::max({completed_hours, superseded_hours, failed_hours,
                   expired_hours});
}

const std::array<delivery_status, 4>& final_delivery_statuses() {
  static const std::array<delivery_status, 4> statuses{
    delivery_status::completed, delivery_status::superseded,
    delivery_status::failed, delivery_status::expired};
  return statuses;
}

} // namespace outbox
