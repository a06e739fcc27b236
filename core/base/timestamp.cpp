#include "core/base/timestamp.hpp"

#include <cstdio>
#include <ctime>

namespace outbox {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// algorithm), so that no time zone or locale is ever involved.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool digits(const std::string& s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size())
    return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

} // namespace

std::string format_timestamp(time_point t) {
  using namespace std::chrono;
  auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  auto secs = us / 1000000;
  auto frac = us % 1000000;
  if (frac < 0) {
    frac += 1000000;
    --secs;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  auto n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out{buf, n};
  if (frac != 0) {
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out + "Z";
}

std::optional<time_point> parse_timestamp(const std::string& s) {
  int y, mo, d, h, mi, se;
  if (!digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || s[7] != '-'
      || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':'
      || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h)
      || !digits(s, 14, 2, mi) || !digits(s, 17, 2, se))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
    return std::nullopt;
  static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > month_days[mo - 1] || (mo == 2 && d == 29 && !leap))
    return std::nullopt;
  size_t pos = 19;
  int64_t nanos = 0;
  if (s[pos] == '.') {
    size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 9)
      nanos = nanos * 10 + (s[pos++] - '0');
    if (pos == start)
      return std::nullopt;
    for (size_t i = pos - start; i < 9; ++i)
      nanos *= 10;
  }
  auto rest = s.substr(pos);
  if (rest != "Z" && rest != "z" && rest != "+00:00")
    return std::nullopt;
  using namespace std::chrono;
  auto secs = days_from_civil(y, static_cast<unsigned>(mo),
                              static_cast<unsigned>(d)) * 86400
              + h * 3600 + mi * 60 + se;
  // Outside what a time_point holds: refused rather than wrapped around.
  constexpr int64_t per_sec = clock_type::period::den; // ticks per second
  static_assert(clock_type::period::num == 1);
  constexpr auto max_ticks = clock_type::duration::max().count();
  if (secs >= max_ticks / per_sec || secs <= -(max_ticks / per_sec))
    return std::nullopt;
  return time_point{duration_cast<clock_type::duration>(
    seconds{secs} + nanoseconds{nanos})};
}

time_point from_unix_micros(int64_t us) {
  using rep = clock_type::rep;
  // Ticks of the clock per microsecond (1000 with libstdc++'s nanoseconds).
  constexpr rep per_us = static_cast<rep>(clock_type::period::den / 1000000);
  static_assert(clock_type::period::num == 1 && per_us >= 1);
  constexpr rep max = clock_type::duration::max().count();
  if (us > max / per_us)
    return time_point::max();
  if (us < -(max / per_us))
    return time_point::min();
  return time_point{clock_type::duration{us * per_us}};
}

time_point plus_seconds(time_point t, int64_t secs) {
  using rep = clock_type::rep;
  constexpr rep per_sec = static_cast<rep>(clock_type::period::den);
  static_assert(clock_type::period::num == 1);
  constexpr rep max = clock_type::duration::max().count();
  constexpr rep min = clock_type::duration::min().count();
  rep ticks = t.time_since_epoch().count();
  if (secs > max / per_sec)
    return time_point::max();
  if (secs < min / per_sec)
    return time_point::min();
  rep delta = secs * per_sec;
  if (delta > 0 && ticks > max - delta)
    return time_point::max();
  if (delta < 0 && ticks < min - delta)
    return time_point::min();
  return time_point{clock_type::duration{ticks + delta}};
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           clock_type::now().time_since_epoch())
    .count();
}

} // namespace outbox
