// The dashboard's page, script and style sheet (http/dashboard/*),
// compiled in by cmake/embed_files.cmake, and the routes that serve them.
#pragma once

#include <vector>

namespace httplib {
class Server;
}

namespace outbox {

struct embedded_file {
  const char* path;         ///< "/dashboard.js"
  const char* content_type; ///< "text/javascript; charset=utf-8"
  const char* text;
};

/// Every file of http/dashboard/, by name.
const std::vector<embedded_file>& dashboard_files();

/// Serves the dashboard at "/" and each of its files at "/NAME"; a node
/// without the status role answers them 404 with a line saying where the
/// dashboard is.
void add_dashboard_routes(httplib::Server& server, bool status_node);

} // namespace outbox
