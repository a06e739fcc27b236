// outboxctl: the operator's command line. Verbs so far:
//   outboxctl migrate --config FILE   apply the schema migrations
#include <iostream>

#include "core/config.hpp"
#include "core/errors.hpp"
#include "core/migrations.hpp"
#include "core/pg_connection.hpp"
#include "tools/cli_config.hpp"

namespace {

constexpr int exit_usage = 2;   // bad flags or config
constexpr int exit_failure = 1; // the database refused or is unreachable

struct ctl_config : outbox::cli_config {
  std::string config_file = "config/outbox.json";
  ctl_config() {
    opt_group{options(), "global"}.add(config_file, "config,c",
                                       "path of the outbox JSON config");
  }
};

int migrate(const outbox::config& cfg) {
  auto conn = outbox::pg_connection::connect(cfg.database_url);
  if (!conn) {
    std::cerr << "outboxctl migrate: " << outbox::render(conn.error()) << "\n";
    return exit_failure;
  }
  auto ran = outbox::migrate(*conn, cfg.names);
  if (!ran) {
    std::cerr << "outboxctl migrate: " << outbox::render(ran.error()) << "\n";
    return exit_failure;
  }
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

} // namespace

int main(int argc, char** argv) {
  ctl_config opts;
  if (auto err = opts.parse_args(argc, argv); !err.empty()) {
    std::cerr << "outboxctl: " << err << "\n";
    return exit_usage;
  }
  if (opts.cli_helptext_printed)
    return 0;
  if (opts.remainder.size() != 1 || opts.remainder[0] != "migrate") {
    std::cerr << "usage: outboxctl migrate --config FILE\n";
    return exit_usage;
  }
  auto cfg = outbox::load_config(opts.config_file);
  if (!cfg) {
    std::cerr << "outboxctl: " << outbox::render(cfg.error()) << "\n";
    return exit_usage;
  }
  return migrate(*cfg);
}
