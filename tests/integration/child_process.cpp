#include "tests/integration/child_process.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/test/unit_test.hpp>

namespace outbox::testing {

std::string read_file(const std::string& path) {
  std::ifstream in{path};
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

long resident_kib(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string key;
  long kib = 0;
  while (in >> key)
    if (key == "VmRSS:" && in >> kib)
      return kib;
  return -1;
}

void check_ends(const std::pair<int, std::string>& run, int status,
                const std::string& text) {
  CAF_MESSAGE("expecting exit status " << status << " and: " << text);
  CAF_CHECK_EQUAL(run.first, status);
  CAF_CHECK_NOT_EQUAL(run.second.find(text), std::string::npos);
}

int open_loopback_connection(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(port);
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

uint16_t free_port() {
  return free_loopback_port();
}

std::pair<int, std::string> run_command(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr)
    return {-1, "popen failed"};
  std::string out;
  char buf[512];
  while (auto n = fread(buf, 1, sizeof(buf), p))
    out.append(buf, n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

} // namespace outbox::testing
