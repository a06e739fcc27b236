#include "tools/benchmark/many_databases.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <libpq-fe.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/amqp/amqp_client.hpp"
#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/base/logging.hpp"
#include "core/json/json_writer.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/pg_connection.hpp"
#include "tests/support/child_process.hpp"
#include "tools/benchmark/bench_run.hpp"
#include "tools/benchmark/producers.hpp"
#include "worker/worker.hpp"

namespace outbox::bench {

namespace {

constexpr const char* event_type = "bench.event";
constexpr const char* job = "BenchJob";

// `url` with another database: libpq parses it (a URI or key=value), and
// every other parameter (host, port, user, password, TLS) stays.
caf::expected<std::string> with_dbname(const std::string& url,
                                       const std::string& dbname) {
  char* err = nullptr;
  auto* opts = PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    if (err)
      PQfreemem(err);
    return make_error(errc::config_invalid, "--database-url: libpq cannot parse it");
  }
  std::string out;
  auto quoted = [](const std::string& v) {
    std::string q = "'";
    for (char c : v) {
      if (c == '\'' || c == '\\')
        q += '\\';
      q += c;
    }
    return q + "'";
  };
  for (auto* o = opts; o->keyword; ++o) {
    std::string key = o->keyword;
    if (key == "dbname")
      continue;
    if (o->val && *o->val)
      out += key + "=" + quoted(o->val) + " ";
  }
  PQconninfoFree(opts);
  return out + "dbname=" + quoted(dbname);
}

// `s` as a JSON string (the URLs may hold quotes or backslashes).
std::string json_string(const std::string& s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return sb.GetString();
}

// The run's databases, queue and config file, dropped however it ends.
struct many {
  const bench_config& o;
  std::string prefix = "bench_" + std::to_string(getpid()) + "_";
  std::string queue = prefix + "q";
  std::string config_path = "/tmp/" + prefix + "databases.json";
  std::vector<std::string> names, urls;
  std::unique_ptr<child_process> relay;
  std::unique_ptr<pg_connection> admin;

  explicit many(const bench_config& o) : o(o) {}

  ~many() {
    relay.reset();
    if (admin)
      for (auto& n : names)
        admin->exec("drop_database", "DROP DATABASE IF EXISTS " + n + " WITH (FORCE)");
    if (auto c = amqp_client::connect(o.amqp_url, "bench cleanup")) {
      (*c)->delete_queue(queue);
      (*c)->delete_queue(results_queue(queue));
      for (size_t i = 0; i < names.size(); ++i)
        (*c)->delete_queue(parked_results_queue(queue, "m" + std::to_string(i)));
    }
    std::remove(config_path.c_str());
  }

  // Makes and migrates `n` databases, writes the relay's config.
  caf::error make(int64_t n) {
    auto conn = pg_connection::connect(o.database_url);
    if (!conn)
      return failed("database", conn.error());
    admin = std::make_unique<pg_connection>(std::move(*conn));
    for (int64_t i = 0; i < n; ++i) {
      auto name = prefix + "m" + std::to_string(i);
      if (auto r = admin->exec("create_database", "CREATE DATABASE " + name); !r)
        return failed("creating database " + name, r.error());
      names.push_back(name);
      auto url = with_dbname(o.database_url, name);
      if (!url)
        return url.error();
      urls.push_back(*url);
      auto db = pg_connection::connect(*url);
      if (!db)
        return failed("database " + name, db.error());
      if (auto ran = migrate(*db, schema_names{}); !ran)
        return failed("migrating " + name, ran.error());
    }
    std::ofstream out{config_path};
    out << "{\"amqpUrl\": " << json_string(o.amqp_url) << ", \"batchSize\": "
        << o.batch_size << ", \"routes\": {\"" << event_type
        << "\": [{\"job\": \"" << job << "\", \"queue\": \"" << queue
        << "\"}]}, \"databases\": {";
    for (size_t i = 0; i < names.size(); ++i)
      out << (i ? ", " : "") << "\"m" << i << "\": {\"databaseUrl\": "
          << json_string(urls[i]) << "}";
    out << "}}\n";
    if (!out)
      return make_error(errc::config_unreadable, "cannot write " + config_path);
    return caf::none;
  }

  // One node of every role but status (it runs on its own: no leaders to
  // spread), as the pipeline phase's single process.
  void start_relay() {
    relay = std::make_unique<child_process>(
      o.outboxd,
      std::vector<std::string>{"--config", config_path, "--roles",
                               "router,dispatcher,results,sweeper"},
      "/tmp/" + prefix + "relay.log");
  }

  caf::error relay_alive() {
    if (relay && relay->exited())
      return make_error(errc::publish_failed,
                        "the relay exited; its log: /tmp/" + prefix + "relay.log");
    return caf::none;
  }
};

int64_t count_completed(pg_connection& db) {
  auto r = db.exec("completed", "SELECT count(*) FROM outbox_deliveries_completed");
  return r ? r->int64(0, 0) : -1;
}

// p50 and p99 of commit→completed over the database's completed
// deliveries, in ms (the event's insert time to the completion's, both by
// the database's clock).
std::pair<double, double> latency_of(pg_connection& db) {
  auto r = db.exec("latency",
                   "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x),"
                   " percentile_cont(0.99) WITHIN GROUP (ORDER BY x) FROM"
                   " (SELECT extract(epoch FROM c.completed_at - e.created_at)"
                   " * 1000 AS x FROM outbox_deliveries_completed c JOIN"
                   " outbox_events e ON e.id = c.event_id) t");
  if (!r || r->size() != 1 || !r->optional_text(0, 0))
    return {0, 0};
  return {std::stod(r->text(0, 0)), std::stod(r->text(0, 1))};
}

caf::error pipeline(many& m, pipeline_databases& out) {
  auto& o = m.o;
  out.databases = o.databases;
  if (auto err = m.make(o.databases))
    return err;
  outbox::worker w{worker_options{o.amqp_url, m.queue, 200}};
  w.handle(job, [](const job_context&) {});
  std::thread worker_thread{[&] { w.run(); }};
  m.start_relay();
  std::string payload = "{\"p\":\"" + std::string(static_cast<size_t>(o.payload_bytes), 'x')
                        + "\"}";
  auto per_db = o.events / o.databases;
  std::cerr << "M: " << o.databases << " databases, " << per_db << " events each, "
            << o.producers << " producers each\n";
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> producers;
  for (auto& url : m.urls)
    producers.emplace_back([&, url] {
      produce(url, schema_names{}, event_type, payload, static_cast<int>(o.producers),
              per_db, 0);
    });
  std::vector<std::unique_ptr<pg_connection>> watch;
  caf::error err;
  for (auto& url : m.urls) {
    auto c = pg_connection::connect(url);
    if (!c) {
      err = failed("watching", c.error());
      break;
    }
    watch.push_back(std::make_unique<pg_connection>(std::move(*c)));
  }
  std::vector<double> done_at(m.urls.size(), 0);
  size_t left = m.urls.size();
  auto until = start + std::chrono::minutes{20};
  while (left > 0 && !err) {
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
    err = m.relay_alive();
    if (std::chrono::steady_clock::now() > until)
      err = make_error(errc::publish_failed, "M: not every delivery completed in 20 minutes");
    for (size_t i = 0; i < watch.size() && !err; ++i)
      if (done_at[i] == 0 && count_completed(*watch[i]) >= per_db) {
        done_at[i] = seconds_since(start);
        --left;
      }
  }
  // Joined on every way out: a thread left joinable ends the process.
  for (auto& p : producers)
    p.join();
  w.stop();
  worker_thread.join();
  if (err)
    return err;
  double last = 0;
  for (size_t i = 0; i < watch.size(); ++i) {
    database_figures f;
    f.name = "m" + std::to_string(i);
    f.events = per_db;
    f.completed_per_s = per_db / done_at[i];
    std::tie(f.p50_ms, f.p99_ms) = latency_of(*watch[i]);
    out.per_database.push_back(f);
    last = std::max(last, done_at[i]);
  }
  out.total_completed_per_s = per_db * o.databases / last;
  out.relay_cpu_seconds = m.relay->cpu_seconds();
  out.relay_rss_mib = m.relay->peak_rss_mib();
  return caf::none;
}

// CPU seconds (user + system) of process `pid` so far, 0 when gone.
double cpu_of(int pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::istringstream rest{text.substr(close + 2)};
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14)
      utime = std::stod(field);
    if (i == 15)
      stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The relay's backends on the run's databases: pid -> CPU seconds so far.
std::map<int, double> backends(pg_connection& admin, const std::string& prefix) {
  std::map<int, double> out;
  auto r = admin.exec("backends",
                      "SELECT pid FROM pg_stat_activity WHERE datname LIKE $1",
                      {prefix + "%"});
  if (r)
    for (int i = 0; i < r->size(); ++i) {
      auto pid = static_cast<int>(r->int64(i, 0));
      out[pid] = cpu_of(pid);
    }
  return out;
}

int64_t transactions(pg_connection& admin, const std::string& prefix) {
  auto r = admin.exec("transactions",
                      "SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint"
                      " FROM pg_stat_database WHERE datname LIKE $1",
                      {prefix + "%"});
  return r ? r->int64(0, 0) : 0;
}

caf::error idle(many& m, idle_databases& out) {
  auto& o = m.o;
  out.databases = o.idle_databases;
  if (auto err = m.make(o.idle_databases))
    return err;
  m.start_relay();
  // Settled: every database's actors connected and passing at rest.
  std::cerr << "Z: " << o.idle_databases << " idle databases, 20 s to settle\n";
  std::this_thread::sleep_for(std::chrono::seconds{20});
  if (auto err = m.relay_alive())
    return err;
  auto& admin = *m.admin;
  auto before = backends(admin, m.prefix);
  auto tx_before = transactions(admin, m.prefix);
  auto relay_before = m.relay->cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  std::cerr << "Z: measuring for " << o.idle_measure_seconds << " s\n";
  std::this_thread::sleep_for(std::chrono::seconds{o.idle_measure_seconds});
  if (auto err = m.relay_alive())
    return err;
  out.seconds = seconds_since(start);
  auto after = backends(admin, m.prefix);
  // pg_stat_database is updated when a backend reports, at most every
  // half second: the span is long enough for that not to matter.
  auto tx_after = transactions(admin, m.prefix);
  double pg_cpu = 0;
  for (auto& [pid, cpu] : after) {
    auto it = before.find(pid);
    pg_cpu += cpu - (it == before.end() ? 0 : it->second);
  }
  out.connections = static_cast<int64_t>(after.size());
  out.relay_rss_mib = m.relay->peak_rss_mib();
  out.relay_cpu_per_minute = (m.relay->cpu_seconds() - relay_before) * 60 / out.seconds;
  out.postgres_cpu_per_minute = pg_cpu * 60 / out.seconds;
  out.transactions_per_s_per_database
    = (tx_after - tx_before) / out.seconds / static_cast<double>(o.idle_databases);
  return caf::none;
}

struct many_report {
  omittable<pipeline_databases> pipeline;
  omittable<idle_databases> idle;
};

template <class Inspector>
bool inspect(Inspector& f, many_report& x) {
  return f(field("manyDatabases", x.pipeline), field("idleDatabases", x.idle));
}

void print(const many_report& r) {
  char line[256];
  if (r.pipeline) {
    auto& p = *r.pipeline;
    std::printf("\nM: %lld databases, one relay\n", static_cast<long long>(p.databases));
    std::printf("%-10s %10s %14s %10s %10s\n", "database", "events", "completed/s",
                "p50 ms", "p99 ms");
    for (auto& d : p.per_database) {
      std::snprintf(line, sizeof line, "%-10s %10lld %14.0f %10.1f %10.1f\n",
                    d.name.c_str(), static_cast<long long>(d.events),
                    d.completed_per_s, d.p50_ms, d.p99_ms);
      std::fputs(line, stdout);
    }
    std::printf("total completed/s %.0f; relay CPU %.1f s, peak RSS %.0f MiB\n",
                p.total_completed_per_s, p.relay_cpu_seconds, p.relay_rss_mib);
  }
  if (r.idle) {
    auto& z = *r.idle;
    std::printf("\nZ: %lld idle databases, one relay, %.0f s at rest\n",
                static_cast<long long>(z.databases), z.seconds);
    std::printf("connections %lld (%.1f per database); relay RSS %.0f MiB\n",
                static_cast<long long>(z.connections),
                z.connections / static_cast<double>(z.databases), z.relay_rss_mib);
    std::printf("CPU per minute: relay %.2f s, PostgreSQL %.2f s; "
                "%.1f transactions/s per database\n",
                z.relay_cpu_per_minute, z.postgres_cpu_per_minute,
                z.transactions_per_s_per_database);
  }
}

} // namespace

int run_many_databases(const bench_config& o) {
  set_log_level("warn"); // the workers' line per job
  many_report r;
  caf::error err;
  {
    many m{o};
    if (o.databases > 0) {
      pipeline_databases p;
      err = pipeline(m, p);
      r.pipeline = p;
    } else {
      idle_databases z;
      err = idle(m, z);
      r.idle = z;
    }
  }
  if (err) {
    std::cerr << "outbox_bench: " << render(err) << "\n";
    return 1;
  }
  print(r);
  json_writer w{"bench"};
  if (!w.write_document(r)) {
    std::cerr << "outbox_bench: the results hold a value JSON cannot carry\n";
    return 1;
  }
  std::ofstream out{o.json_file};
  out << w.json() << "\n";
  if (!out) {
    std::cerr << "outbox_bench: cannot write " << o.json_file << "\n";
    return 1;
  }
  return 0;
}

} // namespace outbox::bench
