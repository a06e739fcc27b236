// An application of an installed Outbox (tests/deploy/install.sh): the
// producer API in its own transaction, a worker, and the fake event store
// of its unit tests, through the installed headers and libraries only.
//
//   consumer_app fake                 the fake event store (no servers)
//   consumer_app migrate CONFIG       the config's tables and function
//   consumer_app publish CONFIG       one order.placed, in a transaction
//   consumer_app work CONFIG QUEUE    runs one job of QUEUE and exits
//
// Exits 0 on success, 1 with a one-line reason on stderr otherwise.
#include <cstdio>
#include <string>

#include <libpq-fe.h>

#include "core/base/errors.hpp"
#include "core/config/config.hpp"
#include "core/domain/json_serializer.hpp"
#include "core/pg/migrations.hpp"
#include "core/pg/pg_connection.hpp"
#include "core/producer/event_store.hpp"
#include "core/testing/fake_event_store.hpp"
#include "worker/worker.hpp"

namespace {

struct order_placed {
  static constexpr const char* event_type = "order.placed";
  std::string order;
};

template <class Inspector>
bool inspect(Inspector& f, order_placed& x) {
  return f(outbox::field("order", x.order));
}

int fail(const std::string& what) {
  std::fprintf(stderr, "consumer_app: %s\n", what.c_str());
  return 1;
}

// The code under test of an application's unit test: publishes through
// whatever event_store it is given.
caf::expected<int64_t> place_order(outbox::event_store& store, pg_conn* conn,
                                   const std::string& id) {
  auto ev = outbox::make_event(order_placed{id});
  if (!ev)
    return ev.error();
  ev->key = id;
  return store.add(conn, *ev);
}

int fake() {
  outbox::testing::fake_event_store store;
  if (auto id = place_order(store, nullptr, "o-1"); !id)
    return fail("fake add: " + outbox::render(id.error()));
  auto seen = store.published_as<order_placed>();
  if (store.count_published<order_placed>() != 1 || seen.at(0).order != "o-1")
    return fail("the fake store did not record the order");
  std::puts("fake store recorded order.placed o-1");
  return 0;
}

int migrate(const outbox::config& cfg) {
  auto conn = outbox::pg_connection::connect(cfg.database_url);
  if (!conn)
    return fail("connect: " + outbox::render(conn.error()));
  auto ran = outbox::migrate(*conn, cfg.names);
  if (!ran)
    return fail("migrate: " + outbox::render(ran.error()));
  std::printf("migrations applied: %d\n", *ran);
  return 0;
}

// As docs/programming.md shows: the event joins the caller's transaction.
int publish(const outbox::config& cfg) {
  PGconn* conn = PQconnectdb(cfg.database_url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    PQfinish(conn);
    return fail("cannot connect to the database");
  }
  auto exec = [conn](const char* sql) {
    PGresult* r = PQexec(conn, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
  };
  if (!exec("BEGIN")) {
    PQfinish(conn);
    return fail("BEGIN failed");
  }
  outbox::db_event_store store{cfg.names};
  auto id = place_order(store, conn, "o-1");
  // A failed add leaves the transaction failed: roll back, as an
  // application would, taking its business change back with it.
  bool committed = id && exec("COMMIT");
  if (!id)
    exec("ROLLBACK");
  PQfinish(conn);
  if (!id)
    return fail("add: " + outbox::render(id.error()));
  if (!committed)
    return fail("the transaction did not commit");
  std::printf("published event %lld\n", static_cast<long long>(*id));
  return 0;
}

int work(const outbox::config& cfg, const std::string& queue) {
  outbox::worker w{{cfg.amqp_url, queue, 1, cfg.queue_type_of(queue)}};
  std::string seen;
  w.handle("SendConfirmationJob", [&seen](const outbox::job_context& job) {
    auto order = job.payload_as<order_placed>();
    if (!order)
      throw outbox::job_failed("payload is not an order.placed");
    seen = order->order + " event " + std::to_string(job.event_id);
  });
  if (auto err = w.check_routes(cfg))
    return fail(outbox::render(err));
  w.run(1);
  if (w.counters().completed != 1 || seen.empty())
    return fail("the job did not complete");
  std::printf("job ran: order %s\n", seen.c_str());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string verb = argc > 1 ? argv[1] : "";
  if (verb == "fake" && argc == 2)
    return fake();
  if (argc < 3 || (verb == "work") != (argc == 4))
    return fail("usage: consumer_app fake | migrate|publish CONFIG | work CONFIG QUEUE");
  auto cfg = outbox::load_config(argv[2]);
  if (!cfg)
    return fail("config: " + outbox::render(cfg.error()));
  if (verb == "migrate")
    return migrate(*cfg);
  if (verb == "publish")
    return publish(*cfg);
  if (verb == "work")
    return work(*cfg, argv[3]);
  return fail("unknown verb " + verb);
}
