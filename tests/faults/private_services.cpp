#include "tests/faults/private_services.hpp"

#include <cstdlib>

#include <caf/test/unit_test.hpp>

#include "tests/integration/child_process.hpp"

namespace outbox::testing {

namespace {

// A one-line file the service scripts wrote (a port), without its newline.
std::string read_value(const std::string& path) {
  auto s = read_file(path);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

} // namespace

private_services::private_services(int broker_heartbeat_seconds) {
  char tmpl[] = "/tmp/outbox-faults.XXXXXX";
  if (mkdtemp(tmpl) == nullptr)
    CAF_FAIL("cannot make a folder for the fault test's servers");
  dir_ = tmpl;
  std::string heartbeat;
  if (broker_heartbeat_seconds > 0)
    heartbeat = "RABBITMQ_TEST_HEARTBEAT="
                + std::to_string(broker_heartbeat_seconds) + " ";
  shell("chmod 755 " + dir_ + " && " + heartbeat + "services_start " + dir_);
  setenv("OUTBOX_TEST_DB_HOST", "127.0.0.1", 1);
  setenv("OUTBOX_TEST_DB_PORT", read_value(dir_ + "/postgres/port").c_str(), 1);
  setenv("OUTBOX_TEST_DB_DATABASE", "postgres", 1);
  setenv("OUTBOX_TEST_DB_USERNAME", "postgres", 1);
  setenv("OUTBOX_TEST_DB_PASSWORD", "", 1);
  auto amqp = "amqp://guest:guest@127.0.0.1:"
              + read_value(dir_ + "/rabbitmq/port") + "/";
  setenv("OUTBOX_TEST_AMQP_URL", amqp.c_str(), 1);
}

private_services::~private_services() {
  if (!peer_dir_.empty())
    shell("rabbitmq_stop " + peer_dir_ + "; rm -rf " + peer_dir_);
  shell("services_stop " + dir_ + "; rm -rf " + dir_);
}

std::string private_services::broker_url() const {
  return "amqp://guest:guest@127.0.0.1:" + read_value(dir_ + "/rabbitmq/port") + "/";
}

std::string private_services::reserve_peer_broker() {
  // Beside the first node's folder: the same owner and permissions.
  peer_dir_ = dir_ + "-peer";
  shell("mkdir -p " + peer_dir_ + " && chmod 755 " + peer_dir_
        + " && rabbitmq_ports " + peer_dir_);
  return "amqp://guest:guest@127.0.0.1:"
         + read_value(peer_dir_ + "/rabbitmq/port") + "/";
}

void private_services::start_peer_broker() {
  shell("rabbitmq_join " + peer_dir_ + " " + dir_);
}

void private_services::stop_peer_broker() {
  shell("rabbitmq_halt " + peer_dir_);
}

void private_services::stop_broker() {
  shell("rabbitmq_halt " + dir_);
}

void private_services::broker_memory_alarm(bool on) {
  shell(std::string{"rabbitmq_memory_alarm "} + dir_ + (on ? " on" : " off"));
}

void private_services::start_broker() {
  shell("rabbitmq_start " + dir_);
}

void private_services::stop_database() {
  shell("postgres_stop " + dir_);
}

void private_services::start_database() {
  shell("postgres_start " + dir_);
}

void private_services::crash_database() {
  shell("postgres_crash " + dir_);
}

void private_services::shell(const std::string& calls) {
  auto [rc, out] = run_command("bash -c 'source " + std::string{OUTBOX_SOURCE_DIR}
                               + "/tools/lib/services.sh && " + calls + "'");
  if (rc != 0)
    CAF_FAIL("services: \"" << calls << "\" failed: " << out);
}

} // namespace outbox::testing
