#define CAF_SUITE support.child_process
#include <caf/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <fstream>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "tests/support/child_process.hpp"

using namespace outbox;

namespace {

std::string command_of(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/cmdline"};
  std::string first;
  std::getline(in, first, '\0');
  return first;
}

// How `pid`, a child of ours, ended: its signal, 0 for an exit, -1 if it
// still runs after `limit`.
int death_signal(pid_t pid, std::chrono::seconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  int st = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  return -1;
}

} // namespace

// A test that aborts, or a benchmark stopped by a signal, runs no
// destructor: its nodes and workers must not run on without it.
CAF_TEST(a child ends when its parent dies without cleaning up) {
  // Orphans come to us, so that we can see how the grandchild ended.
  CAF_REQUIRE_EQUAL(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
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
  // It really runs sleep (an exec that failed would end on its own).
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (command_of(grandchild) != "/bin/sleep" && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  CAF_REQUIRE_EQUAL(command_of(grandchild), "/bin/sleep");
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  int sig = death_signal(grandchild, std::chrono::seconds{10});
  if (sig == -1) {
    kill(grandchild, SIGKILL);
    waitpid(grandchild, nullptr, 0);
  }
  CAF_CHECK_EQUAL(sig, SIGTERM);
}

CAF_TEST(a child gets the environment it is given and not the server URLs) {
  setenv("OUTBOX_DATABASE_URL", "postgresql://secret", 1);
  setenv("OUTBOX_AMQP_URL", "amqp://secret", 1);
  setenv("OUTBOX_CHILD_TEST_KEPT", "kept", 1);
  char path[] = "/tmp/outbox-child-env.XXXXXX";
  int fd = mkstemp(path);
  CAF_REQUIRE_GREATER_OR_EQUAL(fd, 0);
  close(fd);
  {
    child_process env{"/usr/bin/env", {}, path,
                      {"OUTBOX_AMQP_URL=amqp://given", "OUTBOX_CHILD_TEST_SET=a",
                       "OUTBOX_CHILD_TEST_SET=b"}};
    CAF_CHECK_EQUAL(env.wait(10), 0);
  }
  std::ifstream in{path};
  std::string line, seen;
  while (std::getline(in, line))
    if (line.rfind("OUTBOX_CHILD_TEST_", 0) == 0 || line.rfind("OUTBOX_DATABASE_URL=", 0) == 0
        || line.rfind("OUTBOX_AMQP_URL=", 0) == 0)
      seen += line + "\n";
  std::remove(path);
  unsetenv("OUTBOX_DATABASE_URL");
  unsetenv("OUTBOX_AMQP_URL");
  unsetenv("OUTBOX_CHILD_TEST_KEPT");
  CAF_CHECK_EQUAL(seen, "OUTBOX_CHILD_TEST_KEPT=kept\n"
                        "OUTBOX_AMQP_URL=amqp://given\n"
                        "OUTBOX_CHILD_TEST_SET=b\n");
}
