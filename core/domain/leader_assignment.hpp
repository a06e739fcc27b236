// Which node leads each database's routing and sweeping in a cluster of
// several databases: the leaders spread evenly over the live nodes that run
// the role and serve the database (3 nodes and 6 databases: 2 each). The
// status node computes it from its view; every node's agent fetches it
// (actors/leadership_view.hpp). The database's own locks still keep two
// routers from routing at once while a change of leader travels.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace outbox {

/// A node as the assignment sees it.
struct leader_candidate {
  std::string node;
  std::vector<std::string> roles;
  std::vector<std::string> databases; ///< served; empty: every one
  bool up = true;
  /// "role@database" of its actors that cannot lead now: terminated, or
  /// their last pass could not reach the database.
  std::vector<std::string> unfit;
};

/// database -> role -> the leading node's name. A database and role that
/// no live node can take are absent.
using leader_map = std::map<std::string, std::map<std::string, std::string>>;

/// The roles that have one leader per database: routing, and the sweeper
/// (with retention, which runs beside it).
const std::vector<std::string>& led_roles();

/// Assigns each database, in name order, to the least loaded live node
/// that runs the role and serves the database (ties: the first name), per
/// role; a node whose actor for it is unfit only when no node's is fit. Deterministic: the same view gives the same leaders on every
/// status node.
leader_map assign_leaders(std::vector<std::string> databases,
                          const std::vector<leader_candidate>& nodes);

} // namespace outbox
