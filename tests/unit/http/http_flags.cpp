#define CAF_SUITE http.http_flags
#include <caf/test/unit_test.hpp>

#include "core/base/errors.hpp"
#include "tests/unit/case_check.hpp"
#include "http/http_flags.hpp"

using namespace outbox;

CAF_TEST(the http flag takes a port an address or a host on the status node) {
  node_settings status_node;
  status_node.roles = {node_role::status};
  node_settings worker_node;
  worker_node.roles = {node_role::dispatcher};
  node_settings insecure = worker_node;
  insecure.insecure = true;
  node_settings once = worker_node;
  once.once = true;
  node_settings tls = worker_node;
  tls.tls = node_tls{"c.pem", "k.pem", "ca.pem", ""};
  struct {
    const char* text;
    const node_settings* node;
    const char* where; ///< "" for off, "!" + part of the error
  } cases[] = {
    {"", &worker_node, ""},
    {"9100", &worker_node, "127.0.0.1:9100"},
    {"localhost:9100", &worker_node, "localhost:9100"},
    {"127.0.0.1", &status_node, "127.0.0.1:4251"},
    {"localhost:", &status_node, "localhost:4251"},
    {"127.0.0.1", &worker_node, "!give a port"},
    {"0.0.0.0:9100", &worker_node, "!is not a loopback address"},
    {"0.0.0.0:9100", &insecure, "0.0.0.0:9100"},
    {"0.0.0.0:9100", &tls, "0.0.0.0:9100"},
    {"127.0.0.1:99999", &worker_node, "!--http: "},
    {"9100", &once, "!not with --once"},
    {"", &once, ""},
  };
  for (auto& c : cases) {
    auto got = read_http_flag(c.text, *c.node);
    std::string w = c.where;
    if (!w.empty() && w[0] == '!') {
      OUTBOX_CHECK_CASE(c.text, !got
                                  && context_of(got.error()).find(w.substr(1))
                                       != std::string::npos);
      continue;
    }
    OUTBOX_CHECK_CASE(c.text, static_cast<bool>(got));
    if (!got)
      continue;
    std::string seen = *got ? (*got)->host + ":" + std::to_string((*got)->port) : "";
    OUTBOX_CHECK_CASE_EQUAL(c.text, seen, w);
  }
}
