#include "tools/outboxctl/pause_verbs.hpp"

#include <iostream>
#include <set>

#include <pwd.h>
#include <unistd.h>

#include "core/pg/pause_repository.hpp"
#include "core/pg/pg_connection.hpp"
#include "tools/outboxctl/admin_output.hpp"

namespace outbox {

namespace {

constexpr int64_t max_pause_seconds = 366LL * 24 * 3600;
constexpr size_t max_reason_bytes = 200;

// Who pauses: the operator's login and host, as a pause's `paused_by`
// shows them. Nothing secret: what `who` would show on that host.
std::string operator_name() {
  std::string user;
  if (const char* u = getenv("USER"); u && *u)
    user = u;
  else if (auto* pw = getpwuid(getuid()))
    user = pw->pw_name;
  else
    user = "uid " + std::to_string(getuid());
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0)
    return user;
  return user + "@" + host;
}

// The queues the config's routes send to: a pause of any other is a typo.
std::set<std::string> routed_queues(const config& cfg) {
  std::set<std::string> out;
  for (auto& r : cfg.routes)
    out.insert(r.queue);
  return out;
}

std::string joined(const std::set<std::string>& xs) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "none" : out;
}

std::string how_long(double seconds) {
  auto s = static_cast<int64_t>(seconds + 0.5);
  if (s % 86400 == 0)
    return std::to_string(s / 86400) + "d";
  if (s % 3600 == 0)
    return std::to_string(s / 3600) + "h";
  if (s % 60 == 0)
    return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

int pause(pg_connection& db, pause_repository& repo, const std::string& queue,
          const admin_args& a) {
  std::optional<int64_t> for_seconds;
  if (a.pause_for) {
    for_seconds = parse_pause_duration(*a.pause_for);
    if (!for_seconds)
      return admin_usage("--for: \"" + *a.pause_for
                         + "\" is not a duration (a whole number and s, m, h "
                           "or d, at most 366d: 90s, 15m, 2h)");
  }
  auto reason = a.reason.value_or("");
  if (auto why = reason_refused(reason); !why.empty())
    return admin_usage("--reason: " + why);
  auto p = repo.pause(db, queue, operator_name(), reason, for_seconds);
  if (!p)
    return admin_db_failed("pause", p.error());
  std::cout << "queue " << queue << " paused by " << p->paused_by
            << (for_seconds ? " for " + how_long(*for_seconds)
                                + " (resumes by itself at "
                                + local_time(p->paused_at + *for_seconds) + ")"
                            : " until outboxctl resume " + queue)
            << "\nnothing new is sent to it; deliveries already sent finish as "
               "usual\n";
  return 0;
}

int resume(pg_connection& db, pause_repository& repo, const std::string& queue) {
  auto was = repo.resume(db, queue);
  if (!was)
    return admin_db_failed("resume", was.error());
  if (*was)
    std::cout << "queue " << queue << " resumed: its dispatchers send again "
                 "within a second\n";
  else
    std::cout << "queue " << queue << " was not paused\n";
  return 0;
}

} // namespace

bool is_pause_verb(const std::string& verb) {
  return verb == "pause" || verb == "resume";
}

std::optional<int64_t> parse_pause_duration(const std::string& text) {
  if (text.size() < 2 || text.size() > 12)
    return std::nullopt;
  int64_t n = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9')
      return std::nullopt;
    n = n * 10 + (text[i] - '0');
  }
  int64_t unit = 0;
  switch (text.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    default: return std::nullopt;
  }
  if (n <= 0 || n > max_pause_seconds / unit)
    return std::nullopt;
  return n * unit;
}

std::string reason_refused(const std::string& reason) {
  if (reason.size() > max_reason_bytes)
    return "at most " + std::to_string(max_reason_bytes) + " bytes";
  for (unsigned char c : reason)
    if (c < 0x20 || c == 0x7f)
      return "no control characters (one line of text)";
  return "";
}

int run_pause_verb(const std::string& verb, const admin_args& args,
                   const config& cfg) {
  if (args.ids.size() != 1)
    return admin_usage(verb + " takes exactly one queue name");
  auto& queue = args.ids.front();
  if (verb == "resume" && (args.pause_for || args.reason))
    return admin_usage("resume takes no --for or --reason");
  // A pause of a queue no route sends to is a typo. A resume is not
  // checked: a queue taken out of the config while paused must still be
  // resumable (an unknown one answers "was not paused").
  auto queues = routed_queues(cfg);
  if (verb == "pause" && queues.count(queue) == 0)
    return admin_usage("no route of the config sends to queue \"" + queue
                       + "\" (its queues: " + joined(queues) + ")");
  auto db = pg_connection::connect(cfg.database_url);
  if (!db)
    return admin_db_failed(verb, db.error());
  pause_repository repo{cfg.names};
  if (verb == "pause")
    return pause(*db, repo, queue, args);
  return resume(*db, repo, queue);
}

} // namespace outbox
