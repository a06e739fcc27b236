// outboxctl: the operator's command line.
//   outboxctl migrate --config FILE   apply the schema migrations
//   outboxctl status [--connect HOST:PORT] [--json]
//                                     ask the cluster's status actor
//   outboxctl status --db --config FILE [--json]
//                                     read the counts straight from the
//                                     database (no cluster running)
//   outboxctl failed|expired [--queue Q] [--limit N]
//   outboxctl retry ID... | retry --status failed|expired [--queue Q]
//   outboxctl forget ID
//   outboxctl prune --hours N [--status completed,failed,...]
//   outboxctl quarantined [--limit N] | discard EVENT_ID...
//   outboxctl blocked [--queue Q] [--limit N] | skip ID...
//   outboxctl pause QUEUE [--for DURATION] [--reason TEXT] | resume QUEUE
//   outboxctl drain NODE [--connect HOST:PORT]
//   outboxctl replay --job J --queue Q (--since T [--until T] | --event ID,...)
//                    [--event-type TYPE] [--dry-run]
//   --database NAME on every verb that reads the database: required when the
//   config names several (`databases`), migrate's default is all of them;
//   a config without `databases` serves one named "default".
#include <cstdlib>
#include <iostream>
#include <regex>
#include <set>

#include <caf/io/middleman.hpp>

#include "actors/message_types.hpp"
#include "core/pg/status_repository.hpp"
#include "tools/outboxctl/admin_verbs.hpp"
#include "tools/outboxctl/cluster_verbs.hpp"
#include "tools/outboxctl/pause_verbs.hpp"
#include "tools/outboxctl/replay_verb.hpp"
#include "cli/tls_flags.hpp"

#include "core/base/errors.hpp"
#include "core/config/config.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/pg_connection.hpp"
#include "cli/cli_config.hpp"

namespace {

constexpr int exit_usage = 2;   // bad flags or config
constexpr int exit_failure = 1; // the database refused or is unreachable

constexpr const char* usage = "usage: outboxctl migrate --config FILE\n"
                              "       outboxctl status [--connect HOST:PORT] "
                              "[--json]\n"
                              "       outboxctl status --db --config FILE "
                              "[--json]\n"
                              "       outboxctl failed|expired [--queue Q] "
                              "[--limit N] --config FILE\n"
                              "       outboxctl retry ID... | retry --status "
                              "failed|expired [--queue Q] --config FILE\n"
                              "       outboxctl forget ID --config FILE\n"
                              "       outboxctl prune --hours N [--status S,...] "
                              "--config FILE\n"
                              "       outboxctl quarantined [--limit N] --config FILE\n"
                              "       outboxctl discard EVENT_ID... --config FILE\n"
                              "       outboxctl blocked [--queue Q] [--limit N] "
                              "--config FILE\n"
                              "       outboxctl skip ID... --config FILE\n"
                              "       outboxctl pause QUEUE [--for DURATION] "
                              "[--reason TEXT] --config FILE\n"
                              "       outboxctl resume QUEUE --config FILE\n"
                              "       outboxctl drain NODE [--connect HOST:PORT]\n"
                              "       outboxctl replay --job J --queue Q (--since T "
                              "[--until T] | --event ID,...)\n"
                              "                [--event-type TYPE] [--dry-run] "
                              "--config FILE\n";

// --help: what each verb does, then the flags, examples and exit codes.
constexpr const char* verbs_help =
  "Operate an outbox cluster: migrate its schema, show its status, and act\n"
  "on deliveries that ended or wait.\n"
  "\n"
  "verbs:\n"
  "  migrate                  create or upgrade the tables and outbox_publish\n"
  "  status                   ask the cluster's status node (--connect, default\n"
  "                           127.0.0.1:4250); with --db read the database alone\n"
  "  failed, expired          list final deliveries of that status\n"
  "  retry ID... | retry --status failed|expired\n"
  "                           send failed or expired deliveries again\n"
  "  forget ID                delete one final delivery\n"
  "  prune --hours N          delete final deliveries older than N hours\n"
  "  quarantined              list events that could not be routed\n"
  "  discard EVENT_ID...      delete quarantined events\n"
  "  blocked                  list keys stopped by a delivery that failed\n"
  "                           (routes with \"onFailure\": \"block\")\n"
  "  skip ID...               give up a blocking delivery and release its key\n"
  "  pause QUEUE              send nothing new to QUEUE, on every node, until\n"
  "                           resume (or --for ends); what was sent finishes\n"
  "  resume QUEUE             end a pause: its dispatchers send within a second\n"
  "  drain NODE               stop a node as SIGTERM does (by its name in\n"
  "                           status): no new claims, in-flight work finished,\n"
  "                           leaderships handed on, exit 0\n"
  "  replay                   new deliveries of a job and queue for retained\n"
  "                           events (a time range or ids), marked replayed\n"
  "\n"
  "options:\n";

constexpr const char* examples_help =
  "\n"
  "examples:\n"
  "  outboxctl migrate --config /etc/outbox/outbox.json\n"
  "  outboxctl status --connect 10.0.0.1:4250 --tls-cert op.pem --tls-key op.key \\\n"
  "      --tls-ca ca.pem\n"
  "  outboxctl failed --queue stock.publish --limit 20 --config outbox.json\n"
  "  outboxctl retry --status failed --queue stock.publish --config outbox.json\n"
  "  outboxctl pause stock.publish --for 30m --reason \"stock service upgrade\" \\\n"
  "      --config outbox.json\n"
  "\n"
  "exit status: 0 done, 1 the database or cluster failed or refused, 2 bad\n"
  "usage or config. More: man outboxctl, docs/operations.md.\n";

struct ctl_config : outbox::cli_config {
  std::string config_file = "config/outbox.json";
  std::string connect; ///< "" = not given: the default status address
  bool json = false;
  bool db = false;
  std::string queue;
  std::string database; ///< --database: "" = not given
  std::string pause_for, reason;
  outbox::replay_args replay;
  std::string since, until, event_type;
  outbox::admin_args admin;
  outbox::tls_flags tls;
  ctl_config() {
    opt_group{options(), "global"}
      .add(config_file, "config,c", "path of the outbox JSON config")
      .add(connect, "connect", "status: HOST:PORT of the status node")
      .add(json, "json", "status: print JSON")
      .add(db, "db", "status: read the database, not the cluster")
      .add(database, "database", "the database to act on, of the config's databases (one without "
           "them: default)")
      .add(queue, "queue", "failed/expired/retry/blocked: only this queue")
      .add(admin.statuses, "status", "retry: failed|expired; prune: final statuses")
      .add(admin.hours, "hours", "prune: older than this many hours")
      .add(admin.limit, "limit", "failed/expired/quarantined/blocked: at most this many rows")
      .add(pause_for, "for", "pause: resume by itself after this (90s, 15m, 2h, 1d)")
      .add(reason, "reason", "pause: why, shown in status (one line)")
      .add(replay.job, "job", "replay: the route's job")
      .add(since, "since", "replay: events created at or after this time")
      .add(until, "until", "replay: events created before this time")
      .add(replay.event_ids, "event", "replay: these event ids (comma-separated)")
      .add(event_type, "event-type", "replay: only events of this type")
      .add(replay.dry_run, "dry-run", "replay: count, make nothing");
    opt_group tls_group{options(), "global"};
    outbox::add_tls_flags(tls_group, tls);
    outbox::register_message_types(*this);
    load<caf::io::middleman>();
  }

  std::string help() const {
    return std::string{usage} + "\n" + verbs_help
           + options_text({{"config", "FILE"}, {"connect", "HOST:PORT"},
                           {"queue", "QUEUE"}, {"database", "NAME"},
                           {"status", "STATUS[,...]"},
                           {"hours", "N"}, {"limit", "N"}, {"for", "DURATION"},
                           {"reason", "TEXT"}, {"job", "JOB"}, {"since", "TIME"},
                           {"until", "TIME"}, {"event", "ID,..."},
                           {"event-type", "TYPE"}, {"tls-cert", "FILE"},
                           {"tls-key", "FILE"}, {"tls-ca", "FILE"},
                           {"tls-key-passphrase-file", "FILE"}})
           + examples_help;
  }
};

// The first flag given that `verb` does not take ("" when all fit), so a
// misplaced flag is an error instead of being silently ignored.
std::string flag_not_for(const std::string& verb, const ctl_config& o) {
  struct flag {
    const char* name;
    bool given;
    std::set<std::string> verbs;
  };
  const flag flags[] = {
    {"--connect", !o.connect.empty(), {"status", "drain"}},
    {"--json", o.json, {"status"}},
    {"--db", o.db, {"status"}},
    {"--database", !o.database.empty(),
     {"migrate", "status", "failed", "expired", "retry", "forget", "prune",
      "quarantined", "discard", "blocked", "skip", "pause", "resume", "replay"}},
    {"--queue", !o.queue.empty(), {"failed", "expired", "retry", "blocked", "replay"}},
    {"--status", !o.admin.statuses.empty(), {"retry", "prune"}},
    {"--hours", o.admin.hours != outbox::not_given, {"prune"}},
    {"--limit", o.admin.limit != outbox::not_given,
     {"failed", "expired", "quarantined", "blocked"}},
    {"--for", !o.pause_for.empty(), {"pause"}},
    {"--reason", !o.reason.empty(), {"pause"}},
    {"--job", !o.replay.job.empty(), {"replay"}},
    {"--since", !o.since.empty(), {"replay"}},
    {"--until", !o.until.empty(), {"replay"}},
    {"--event", !o.replay.event_ids.empty(), {"replay"}},
    {"--event-type", !o.event_type.empty(), {"replay"}},
    {"--dry-run", o.replay.dry_run, {"replay"}},
  };
  for (auto& f : flags)
    if (f.given && f.verbs.count(verb) == 0)
      return f.name;
  if (verb == "status" && o.db && !o.connect.empty())
    return "--connect (with --db)";
  if (verb == "status" && !o.db && !o.database.empty())
    return "--database (without --db: the status node shows every database)";
  bool tls = !o.tls.certificate.empty() || !o.tls.key.empty()
             || !o.tls.ca_file.empty() || !o.tls.passphrase_file.empty();
  if (tls && ((verb != "status" && verb != "drain") || o.db))
    return "--tls-* (only status and drain talk to a node)";
  return "";
}

// What is wrong with --database NAME's spelling, "" when nothing.
std::string database_flag_error(const std::string& name) {
  static const std::regex valid{"[a-z0-9_]{1,32}"};
  if (name.empty() || std::regex_match(name, valid))
    return "";
  return "--database: a name is 1 to 32 of a-z, 0-9 and _";
}

std::string database_names(const outbox::cluster_config& all) {
  std::string out;
  for (auto& db : all.databases)
    out += (out.empty() ? "" : ", ") + db.database;
  return out;
}

// The databases a verb acts on: the one --database names, else the only
// one, else (migrate) every one. A config without `databases` serves one
// named "default", so that a command written with --database default keeps
// its meaning once the config names several.
caf::expected<std::vector<outbox::config>>
databases_for(const std::string& verb, const std::string& name,
              outbox::cluster_config all) {
  if (!name.empty()) {
    auto* db = all.find(name);
    if (!db)
      return outbox::make_error(outbox::errc::config_invalid,
                                "--database " + name
                                  + ": no such database; the config serves "
                                  + database_names(all));
    return std::vector<outbox::config>{*db};
  }
  if (all.databases.size() == 1 || verb == "migrate")
    return std::move(all.databases);
  return outbox::make_error(outbox::errc::config_invalid,
                            "--database NAME is required: the config serves "
                              + database_names(all));
}

int status_from_db(const outbox::config& cfg, bool json) {
  auto conn = outbox::pg_connection::connect(cfg.database_url);
  if (!conn) {
    std::cerr << "outboxctl status: " << outbox::render(conn.error()) << "\n";
    return exit_failure;
  }
  outbox::status_repository repo{cfg.names};
  auto counts = repo.read(*conn);
  if (!counts) {
    std::cerr << "outboxctl status: " << outbox::render(counts.error()) << "\n";
    return exit_failure;
  }
  outbox::cluster_status s;
  outbox::database_status db;
  db.name = cfg.database;
  db.ok = true;
  db.counts = std::move(*counts);
  s.databases.push_back(std::move(db));
  outbox::print_status(s, json, false);
  return 0;
}

// `prefix` names the database when the config names several.
int migrate(const outbox::config& cfg, const std::string& prefix) {
  auto conn = outbox::pg_connection::connect(cfg.database_url);
  if (!conn) {
    std::cerr << "outboxctl migrate: " << prefix << outbox::render(conn.error())
              << "\n";
    return exit_failure;
  }
  auto ran = outbox::migrate(*conn, cfg.names);
  if (!ran) {
    std::cerr << "outboxctl migrate: " << prefix << outbox::render(ran.error())
              << "\n";
    return exit_failure;
  }
  std::cout << prefix;
  if (*ran == 0)
    std::cout << "schema is up to date (" << outbox::migrations().size()
              << " migrations, tables " << cfg.names.events << ", "
              << cfg.names.deliveries << ")\n";
  else
    std::cout << "applied " << *ran << " migration(s); tables "
              << cfg.names.events << ", " << cfg.names.deliveries
              << ", function " << cfg.names.publish_function << "\n";
  return 0;
}

// Migrates each database in turn: one that fails does not stop the others.
int migrate_all(const std::vector<outbox::config>& dbs, bool named) {
  int rc = 0;
  for (auto& db : dbs)
    if (auto one = migrate(db, named ? db.database + ": " : ""); one != 0)
      rc = one;
  return rc;
}

// Reads the config and picks the databases the verb acts on; prints why
// not on failure.
caf::expected<std::vector<outbox::config>>
load_databases(const std::string& verb, const ctl_config& opts, bool& named) {
  auto all = outbox::load_cluster_config(opts.config_file);
  if (!all)
    return std::move(all.error());
  named = all->named;
  return databases_for(verb, opts.database, std::move(*all));
}

} // namespace

int main(int argc, char** argv) {
  outbox::bound_connect_timeout();
  ctl_config opts;
  if (auto err = opts.parse_args(argc, argv); !err.empty()) {
    std::cerr << "outboxctl: " << err << "\n";
    return exit_usage;
  }
  if (opts.answered_help("outboxctl", opts.help()))
    return 0;
  auto verb = opts.remainder.empty() ? std::string{} : opts.remainder[0];
  if (auto misplaced = flag_not_for(verb, opts); !misplaced.empty()) {
    std::cerr << "outboxctl " << verb << ": " << misplaced
              << " does not apply to this verb\n"
              << usage;
    return exit_usage;
  }
  if (auto bad = database_flag_error(opts.database); !bad.empty()) {
    std::cerr << "outboxctl " << verb << ": " << bad << "\n";
    return exit_usage;
  }
  // The operator verbs read the config first (migrate and status, after
  // their arguments).
  bool database_verb = outbox::is_admin_verb(verb) || outbox::is_pause_verb(verb)
                       || verb == "replay";
  bool named = false;
  using databases = caf::expected<std::vector<outbox::config>>;
  auto dbs = database_verb ? load_databases(verb, opts, named)
                           : databases{std::vector<outbox::config>(1)};
  if (!dbs) {
    std::cerr << "outboxctl: " << outbox::render(dbs.error()) << "\n";
    return exit_usage;
  }
  auto* cfg = &dbs->front();
  if (outbox::is_admin_verb(verb)) {
    opts.admin.ids.assign(opts.remainder.begin() + 1, opts.remainder.end());
    if (!opts.queue.empty())
      opts.admin.queue = opts.queue;
    return outbox::run_admin_verb(verb, opts.admin, *cfg);
  }
  if (outbox::is_pause_verb(verb)) {
    opts.admin.ids.assign(opts.remainder.begin() + 1, opts.remainder.end());
    if (!opts.pause_for.empty())
      opts.admin.pause_for = opts.pause_for;
    if (!opts.reason.empty())
      opts.admin.reason = opts.reason;
    return outbox::run_pause_verb(verb, opts.admin, *cfg);
  }
  if (verb == "replay") {
    auto& r = opts.replay;
    r.queue = opts.queue;
    r.event_ids.insert(r.event_ids.end(), opts.remainder.begin() + 1,
                       opts.remainder.end());
    for (auto [value, into] : {std::pair{&opts.since, &r.since},
                               std::pair{&opts.until, &r.until},
                               std::pair{&opts.event_type, &r.event_type}})
      if (!value->empty())
        *into = *value;
    return outbox::run_replay_verb(r, *cfg);
  }
  if (verb == "drain") {
    if (opts.remainder.size() != 2) {
      std::cerr << "outboxctl drain: takes exactly one node name (as "
                   "outboxctl status shows it)\n"
                << usage;
      return exit_usage;
    }
    return outbox::drain_node(opts, {opts.connect, opts.tls}, opts.remainder[1]);
  }
  if (verb != "migrate" && verb != "status") {
    if (!verb.empty())
      std::cerr << "outboxctl: no such verb \"" << verb << "\" (see --help)\n";
    std::cerr << usage;
    return exit_usage;
  }
  if (opts.remainder.size() != 1) {
    std::cerr << "outboxctl " << verb << ": unexpected argument \""
              << opts.remainder[1] << "\"\n"
              << usage;
    return exit_usage;
  }
  bool status = opts.remainder[0] == "status";
  if (status && !opts.db)
    return outbox::status_from_cluster(opts, {opts.connect, opts.tls}, opts.json);
  dbs = load_databases(verb, opts, named);
  if (!dbs) {
    std::cerr << "outboxctl: " << outbox::render(dbs.error()) << "\n";
    return exit_usage;
  }
  return status ? status_from_db(dbs->front(), opts.json)
                : migrate_all(*dbs, named);
}
