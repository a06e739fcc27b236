#include "tools/benchmark/process.hpp"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace outbox::bench {

process::process(const std::string& path, const std::vector<std::string>& args,
                 const std::string& log_file) {
  std::vector<std::string> store{path};
  store.insert(store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : store)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(path.c_str(), argv.data());
    _exit(127);
  }
}

process::~process() {
  if (pid_ > 0)
    stop();
}

double process::peak_rss_mib() const {
  std::ifstream in{"/proc/" + std::to_string(pid_) + "/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stod(line.substr(6)) / 1024.0; // kB
  return 0;
}

double process::cpu_seconds() const {
  std::ifstream in{"/proc/" + std::to_string(pid_) + "/stat"};
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) start at ") ".
  std::istringstream rest{text.substr(text.rfind(')') + 2)};
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

int process::stop() {
  if (pid_ <= 0)
    return -1;
  kill(pid_, SIGTERM);
  int st = 0;
  for (int i = 0; i < 300; ++i) {
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &st, 0);
  pid_ = -1;
  return 137;
}

} // namespace outbox::bench
