// The dashboard's routes. The page only reads /api/status (same origin) and
// writes every name it shows as text, never as markup; the headers say so
// to the browser too: scripts, styles and fetches from this origin only (no
// inline script, so an injected one would not run), and no guessing of
// content types.
#include "http/dashboard_files.hpp"

#include <string>

#include <httplib.h>

namespace outbox {

namespace {

void secure(httplib::Response& res) {
  res.set_header("Content-Security-Policy", "default-src 'self'");
  res.set_header("X-Content-Type-Options", "nosniff");
  // The files change with the binary only; the page is small.
  res.set_header("Cache-Control", "no-cache");
}

void no_dashboard(httplib::Response& res) {
  res.status = 404;
  secure(res);
  res.set_content("no dashboard here: it is served by the status node's "
                  "--http endpoint\n",
                  "text/plain; charset=utf-8");
}

} // namespace

void add_dashboard_routes(httplib::Server& server, bool status_node) {
  for (auto& f : dashboard_files()) {
    std::string path = f.path;
    bool page = path == "/dashboard.html";
    auto serve = [&f, status_node](const httplib::Request&,
                                   httplib::Response& res) {
      if (!status_node)
        return no_dashboard(res);
      secure(res);
      res.set_content(f.text, f.content_type);
    };
    // cpp-httplib takes a pattern: the name's dots are meant literally.
    std::string pattern;
    for (char c : path)
      pattern += c == '.' ? std::string{"\\."} : std::string(1, c);
    server.Get(pattern, serve);
    if (page)
      server.Get("/", serve);
  }
}

} // namespace outbox
