#include "tools/benchmark/machine_cpu.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace outbox::bench {

namespace {

double ticks_per_second() {
  static const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  return hz;
}

// The fields of /proc/PID/stat that matter here. The command name is in
// parentheses and may hold spaces, so fields are counted after the last ')'.
struct proc_stat {
  std::string comm;
  long ppid = 0;
  double own = 0, reaped_children = 0; // seconds
};

bool read_proc_stat(const std::string& pid, proc_stat& out) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(in, line))
    return false;
  auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return false;
  out.comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> f; // f[0] is field 3 (state)
  std::string x;
  while (rest >> x && f.size() < 15)
    f.push_back(x);
  if (f.size() < 15)
    return false;
  out.ppid = std::atol(f[1].c_str());
  out.own = (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / ticks_per_second();
  out.reaped_children = (std::atof(f[13].c_str()) + std::atof(f[14].c_str()))
                        / ticks_per_second();
  return true;
}

std::string group_of(const std::string& comm) {
  if (comm == "postgres")
    return "postgres";
  if (comm == "beam.smp" || comm.rfind("erl", 0) == 0 || comm == "epmd"
      || comm == "inet_gethost")
    return "rabbitmq";
  if (comm.rfind("outboxd", 0) == 0)
    return "outboxd";
  return "other";
}

double machine_busy_seconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
         softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq + steal) / ticks_per_second();
}

} // namespace

cpu_seconds sample_cpu() {
  std::map<long, proc_stat> procs;
  if (DIR* d = opendir("/proc")) {
    while (auto* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
        continue;
      proc_stat s;
      if (read_proc_stat(name, s))
        procs.emplace(std::atol(name.c_str()), std::move(s));
    }
    closedir(d);
  }
  cpu_seconds out{{"postgres", 0}, {"rabbitmq", 0}, {"outboxd", 0},
                  {"bench", 0},    {"other", 0}};
  const long self = static_cast<long>(getpid());
  for (auto& [pid, s] : procs) {
    auto group = pid == self ? std::string{"bench"} : group_of(s.comm);
    out[group] += s.own;
    // Backends that exited count through the postmaster, which reaps them
    // (the postmaster is the postgres process whose parent is not one).
    auto parent = procs.find(s.ppid);
    if (group == "postgres"
        && (parent == procs.end() || parent->second.comm != "postgres"))
      out[group] += s.reaped_children;
  }
  out["machine"] = machine_busy_seconds();
  return out;
}

cpu_seconds cpu_between(const cpu_seconds& earlier, const cpu_seconds& later) {
  cpu_seconds out;
  for (auto& [k, v] : later) {
    auto it = earlier.find(k);
    out[k] = v - (it == earlier.end() ? 0.0 : it->second);
  }
  return out;
}

} // namespace outbox::bench
