#define CAF_SUITE tools.child_process
#include <caf/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "tools/child_process.hpp"

using namespace outbox;

namespace {

// Running, as opposed to gone or a zombie nobody has reaped yet.
bool running(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text;
  if (!std::getline(in, text))
    return false;
  auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size()
         && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

} // namespace

// A test that aborts, or a benchmark stopped by a signal, runs no
// destructor: its nodes and workers must not run on without it.
CAF_TEST(a child ends when its parent dies without cleaning up) {
  int fds[2];
  CAF_REQUIRE_EQUAL(pipe(fds), 0);
  pid_t parent = fork();
  CAF_REQUIRE_GREATER_OR_EQUAL(parent, 0);
  if (parent == 0) {
    close(fds[0]);
    auto* child = new child_process{"/bin/sleep", {"60"}, "/dev/null"};
    pid_t pid = child->pid();
    if (write(fds[1], &pid, sizeof(pid)) != sizeof(pid))
      _exit(1);
    pause(); // until killed: no destructor runs
    _exit(0);
  }
  close(fds[1]);
  pid_t grandchild = -1;
  CAF_REQUIRE_EQUAL(read(fds[0], &grandchild, sizeof(grandchild)),
                    static_cast<ssize_t>(sizeof(grandchild)));
  close(fds[0]);
  CAF_REQUIRE(running(grandchild));
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (running(grandchild) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  bool survived = running(grandchild);
  if (survived)
    kill(grandchild, SIGKILL);
  CAF_CHECK(!survived);
}
