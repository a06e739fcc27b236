#include "tests/support/child_process.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace outbox {

namespace {

std::string name_of(const std::string& entry) {
  return entry.substr(0, entry.find('='));
}

// This process's environment without OUTBOX_DATABASE_URL and
// OUTBOX_AMQP_URL, then `extra`'s NAME=value entries set one after another
// (the last of a name wins; an entry without '=' is ignored).
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    auto name = name_of(*e);
    if (name != "OUTBOX_DATABASE_URL" && name != "OUTBOX_AMQP_URL")
      out.emplace_back(*e);
  }
  for (auto& entry : extra) {
    if (entry.find('=') == std::string::npos)
      continue;
    auto name = name_of(entry);
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const std::string& e) { return name_of(e) == name; }),
              out.end());
    out.push_back(entry);
  }
  return out;
}

} // namespace

child_process::child_process(const std::string& path,
                             const std::vector<std::string>& args,
                             const std::string& log_file,
                             const std::vector<std::string>& env) {
  std::vector<std::string> store{path};
  store.insert(store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : store)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // The environment is built before the fork: between fork and exec a
  // child of a process with threads may only make async-signal-safe calls.
  std::vector<std::string> environment = child_environment(env);
  std::vector<char*> envp;
  for (auto& e : environment)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    // A parent that dies without running destructors (an aborted test, a
    // benchmark stopped with a signal) must not leave nodes and workers
    // running on the shared servers. If it died before this line, go now.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      _exit(127);
    int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    // Nothing else the parent holds goes along: a child that outlives an
    // aborted test would otherwise keep, say, a lock file's descriptor and
    // the lock with it.
    close_range(3, ~0U, 0);
    // The parent may block signals; the child must start clean.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(path.c_str(), argv.data(), envp.data());
    _exit(127);
  }
}

child_process::~child_process() {
  if (pid_ > 0)
    stop();
}

void child_process::signal(int sig) {
  if (pid_ > 0)
    ::kill(pid_, sig);
}

int child_process::wait(int timeout_seconds) {
  if (pid_ <= 0)
    return -1;
  auto until = std::chrono::steady_clock::now()
               + std::chrono::seconds{timeout_seconds};
  int st = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  return -1;
}

int child_process::stop() {
  signal(SIGTERM);
  signal(SIGCONT); // a stopped child (a test's SIGSTOP) handles it now
  auto rc = wait(30);
  if (rc != -1 || pid_ <= 0)
    return rc;
  signal(SIGKILL);
  return wait(30);
}

bool child_process::exited() {
  if (pid_ <= 0)
    return true;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) != pid_)
    return false;
  pid_ = -1;
  return true;
}

double child_process::peak_rss_mib() const {
  std::ifstream in{"/proc/" + std::to_string(pid_) + "/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stod(line.substr(6)) / 1024.0; // kB
  return 0;
}

double child_process::cpu_seconds() const {
  std::ifstream in{"/proc/" + std::to_string(pid_) + "/stat"};
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos)
    return 0;
  // Fields after the command name (which may hold spaces): state is 3rd,
  // utime the 14th and stime the 15th.
  std::istringstream rest{text.substr(close + 2)};
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14)
      utime = std::stol(field);
    if (i == 15)
      stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

} // namespace outbox
