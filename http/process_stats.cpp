#include "http/process_stats.hpp"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace outbox {

namespace {

// Seconds since boot, and the boot time, to turn /proc/self/stat's start
// time (clock ticks since boot) into Unix time.
double boot_time_seconds() {
  std::ifstream in{"/proc/stat"};
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value)
      return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

} // namespace

process_stats read_process_stats() {
  process_stats out;
  double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream stat{"/proc/self/stat"};
  std::string line;
  std::getline(stat, line);
  // Fields after the command name, which is in parentheses and may hold
  // spaces: state is field 3, utime 14, stime 15, starttime 22, rss 24.
  auto close = line.rfind(')');
  if (close != std::string::npos && ticks > 0) {
    std::istringstream rest{line.substr(close + 2)};
    std::string field;
    double utime = 0, stime = 0, start = 0, rss = 0;
    for (int i = 3; rest >> field; ++i) {
      if (i == 14)
        utime = std::stod(field);
      else if (i == 15)
        stime = std::stod(field);
      else if (i == 22)
        start = std::stod(field);
      else if (i == 24)
        rss = std::stod(field);
    }
    out.cpu_seconds = (utime + stime) / ticks;
    out.resident_bytes = rss * page;
    out.start_time_seconds = boot_time_seconds() + start / ticks;
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator{"/proc/self/fd", ec};
       !ec && it != std::filesystem::directory_iterator{}; it.increment(ec))
    ++out.open_fds;
  return out;
}

} // namespace outbox
