#define CAF_SUITE core.config_queue_type
#include <caf/test/unit_test.hpp>

#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "core/base/errors.hpp"
#include "core/config/config.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

namespace {

std::string no_env(const char*) { return {}; }

std::string with_routes(const std::string& routes, const std::string& top = "") {
  return "{" + top + (top.empty() ? "" : ", ") + "\"routes\": {" + routes + "}}";
}

std::string route(const std::string& job, const std::string& queue,
                  const std::string& extra = "") {
  return "{\"job\": \"" + job + "\", \"queue\": \"" + queue + "\""
         + (extra.empty() ? "" : ", " + extra) + "}";
}

struct type_case {
  const char* name;
  std::string json;
  queue_type a, b; ///< the types of queues "a" and "b"
};

struct bad_case {
  const char* name;
  std::string json;
  std::string text; ///< a part of the error
};

} // namespace

CAF_TEST(queue types come from the route or the top level default) {
  auto two = [](const std::string& ea, const std::string& eb) {
    return "\"e\": [" + route("J", "a", ea) + ", " + route("K", "b", eb) + "]";
  };
  std::vector<type_case> cases{
    {"no key: classic", with_routes(two("", "")), queue_type::classic,
     queue_type::classic},
    {"top level quorum", with_routes(two("", ""), R"("queueType": "quorum")"),
     queue_type::quorum, queue_type::quorum},
    {"a route overrides", with_routes(two(R"("queueType": "quorum")", "")),
     queue_type::quorum, queue_type::classic},
    {"a route overrides the top level",
     with_routes(two("", R"("queueType": "classic")"), R"("queueType": "quorum")"),
     queue_type::quorum, queue_type::classic},
    {"two routes of one queue agree",
     with_routes(two(R"("queueType": "quorum")", "") + ", \"f\": ["
                 + route("L", "a", R"("queueType": "quorum")") + "]"),
     queue_type::quorum, queue_type::classic},
  };
  for (auto& c : cases) {
    auto cfg = parse_config(c.json, no_env);
    OUTBOX_CHECK_CASE(c.name, cfg);
    if (!cfg)
      continue;
    OUTBOX_CHECK_CASE(c.name, cfg->queue_type_of("a") == c.a);
    OUTBOX_CHECK_CASE(c.name, cfg->queue_type_of("b") == c.b);
    // A queue no route names (a worker's own) gets the default.
    OUTBOX_CHECK_CASE(c.name, cfg->queue_type_of("other") == cfg->default_queue_type);
  }
}

CAF_TEST(bad queue types are reported with their path) {
  const std::string rule = R"(must be "classic" or "quorum")";
  std::vector<bad_case> cases{
    {"top level bogus", with_routes("", R"("queueType": "mirrored")"),
     R"(queueType = "mirrored": )" + rule},
    {"top level upper case", with_routes("", R"("queueType": "QUORUM")"), rule},
    {"top level number", with_routes("", R"("queueType": 1)"), rule},
    {"top level null", with_routes("", R"("queueType": null)"), rule},
    {"route bogus", with_routes("\"e\": [" + route("J", "a", R"("queueType": "stream")") + "]"),
     R"(routes["e"][0].queueType = "stream": )" + rule},
    {"one queue two types",
     with_routes("\"e\": [" + route("J", "a", R"("queueType": "quorum")") + "], \"f\": ["
                 + route("K", "a") + "]"),
     R"(routes["f"][0]: gives queue "a" the type "classic", an earlier route of it "quorum")"},
  };
  for (auto& c : cases) {
    auto cfg = parse_config(c.json, no_env);
    OUTBOX_CHECK_CASE(c.name, !cfg);
    if (cfg)
      continue;
    auto text = render(cfg.error());
    OUTBOX_CHECK_CASE(c.name, cfg.error() == errc::config_invalid);
    OUTBOX_CHECK_CASE(c.name, text.find(c.text) != std::string::npos);
    if (text.find(c.text) == std::string::npos)
      CAF_MESSAGE(text);
  }
}

CAF_TEST(amqpUrl and amqpUrlFile take a broker list) {
  auto cfg = parse_config(
    with_routes("", R"("amqpUrl": "amqp://u:pw@h1:5672/, amqp://u:pw@h2:5673/")"), no_env);
  CAF_REQUIRE(cfg);
  CAF_CHECK_EQUAL(cfg->amqp_url, "amqp://u:pw@h1:5672/, amqp://u:pw@h2:5673/");
  char path[] = "/tmp/outbox-url-list.XXXXXX";
  int fd = mkstemp(path);
  CAF_REQUIRE(fd >= 0);
  std::string list = "amqp://u:s3cret@h1/,amqp://u:s3cret@h2/\n";
  CAF_REQUIRE_EQUAL(write(fd, list.data(), list.size()),
                    static_cast<ssize_t>(list.size()));
  close(fd);
  auto from_file = parse_config(
    with_routes("", std::string{R"("amqpUrlFile": ")"} + path + "\""), no_env);
  CAF_CHECK(from_file);
  if (from_file)
    CAF_CHECK_EQUAL(from_file->amqp_url, "amqp://u:s3cret@h1/,amqp://u:s3cret@h2/");
  // A bad entry is named by its position, the file's password never shown.
  list = "amqp://u:s3cret@h1/,http://u:s3cret@h2/\n";
  fd = open(path, O_WRONLY | O_TRUNC);
  CAF_REQUIRE(fd >= 0);
  CAF_REQUIRE_EQUAL(write(fd, list.data(), list.size()),
                    static_cast<ssize_t>(list.size()));
  close(fd);
  auto bad = parse_config(
    with_routes("", std::string{R"("amqpUrlFile": ")"} + path + "\""), no_env);
  unlink(path);
  CAF_REQUIRE(!bad);
  auto text = render(bad.error());
  CAF_CHECK(text.find("amqpUrlFile: broker 2 of 2") != std::string::npos);
  CAF_CHECK_EQUAL(text.find("s3cret"), std::string::npos);
}
