#include "core/pg/pg_connection.hpp"

#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>

#include <libpq-events.h>
#include <libpq-fe.h>

#include "core/base/errors.hpp"

// libpq names its opaque types `struct pg_conn` and `struct pg_result`
// (PGconn, PGresult), which is what lets our header forward-declare them.

namespace outbox {

namespace {

PGconn* raw(pg_conn* c) { return c; }
const PGresult* raw(const pg_result* r) { return r; }

// Silences libpq's default notice printer: notices may quote data.
void ignore_notice(void*, const char*) {
  // nop
}

caf::error statement_error(const char* name, PGresult* res, PGconn* conn) {
  if (PQstatus(conn) != CONNECTION_OK)
    return make_error(errc::database_unavailable,
                      std::string{name} + ": the database connection was lost");
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string code = state ? state : "?????";
  std::string text = std::string{name} + " failed (SQLSTATE " + code + ")";
  if (code.rfind("OB", 0) == 0) {
    // Raised by the outbox's own SQL with a message written to be safe.
    if (const char* msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY))
      text = msg;
  }
  return make_error(errc::database_error, std::move(text));
}

// libpq takes parameters as C strings, NULL for SQL NULL.
std::vector<const char*> c_strings(const pg_params& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (auto& p : params)
    values.push_back(p ? p->c_str() : nullptr);
  return values;
}

} // namespace

pg_rows::pg_rows(pg_result* res)
  : res_(res, [](pg_result* r) { PQclear(r); }) {
}

int pg_rows::size() const { return PQntuples(raw(res_.get())); }

bool pg_rows::is_null(int row, int col) const {
  return PQgetisnull(raw(res_.get()), row, col) != 0;
}

std::string pg_rows::text(int row, int col) const {
  auto r = raw(res_.get());
  return {PQgetvalue(r, row, col),
          static_cast<size_t>(PQgetlength(r, row, col))};
}

int64_t pg_rows::int64(int row, int col) const {
  return is_null(row, col) ? 0 : std::stoll(text(row, col));
}

std::optional<std::string> pg_rows::optional_text(int row, int col) const {
  if (is_null(row, col))
    return std::nullopt;
  return text(row, col);
}

int pg_rows::column(const char* name) const {
  // Quoted: the name is matched exactly, as the statement spells it.
  return PQfnumber(raw(res_.get()), ("\"" + std::string{name} + "\"").c_str());
}

struct pg_connection::session {
  std::set<std::string> prepared;
};

pg_connection::pg_connection(std::shared_ptr<pg_conn> conn)
  : conn_(std::move(conn)), session_(std::make_shared<session>()) {
}

namespace {

// libpq's own message would say why TLS failed, but it is external text:
// when the URL asks for TLS, at least point at the settings that decide.
std::string tls_hint(PGconn* c) {
  std::string mode;
  if (PQconninfoOption* opts = PQconninfo(c)) {
    for (auto* o = opts; o->keyword != nullptr; ++o)
      if (std::string{o->keyword} == "sslmode" && o->val != nullptr)
        mode = o->val;
    PQconninfoFree(opts);
  }
  if (mode != "require" && mode != "verify-ca" && mode != "verify-full")
    return "";
  return " with TLS (sslmode=" + mode
         + "; check sslrootcert, sslcert, sslkey and that the server's "
           "certificate names its host)";
}

} // namespace

namespace {

std::mutex fallback_name_mutex;
std::string fallback_name;

std::string fallback_application_name() {
  std::lock_guard<std::mutex> guard{fallback_name_mutex};
  return fallback_name;
}

} // namespace

void set_fallback_application_name(const std::string& name) {
  std::lock_guard<std::mutex> guard{fallback_name_mutex};
  fallback_name = name;
}

caf::expected<pg_connection> pg_connection::connect(const std::string& url) {
  // The URL is expanded in place of dbname; libpq's own
  // fallback_application_name yields to an application_name of the URL or
  // of PGAPPNAME.
  auto name = fallback_application_name();
  const char* keys[] = {"fallback_application_name", "dbname", nullptr};
  const char* values[] = {name.c_str(), url.c_str(), nullptr};
  PGconn* c = name.empty() ? PQconnectdb(url.c_str())
                           : PQconnectdbParams(keys, values, /*expand_dbname*/ 1);
  if (c == nullptr)
    return make_error(errc::database_unavailable, "out of memory");
  PQsetNoticeProcessor(c, ignore_notice, nullptr);
  std::shared_ptr<pg_conn> owned{c,
                                 [](pg_conn* p) { PQfinish(raw(p)); }};
  if (PQstatus(c) != CONNECTION_OK) {
    std::string where = std::string{PQhost(c) ? PQhost(c) : "?"} + ":"
                        + (PQport(c) ? PQport(c) : "?") + "/"
                        + (PQdb(c) ? PQdb(c) : "?");
    return make_error(errc::database_unavailable,
                      "cannot connect to the database at " + where + tls_hint(c));
  }
  return pg_connection{std::move(owned)};
}

namespace {

// The prepared statements of a borrowed connection, kept with it. libpq
// calls this for the connection's events; a PGconn is used by one thread
// at a time, so its data needs no lock.
template <class Session>
int remember_session(PGEventId id, void* info, void*) {
  auto data = [](PGconn* c) {
    return static_cast<std::shared_ptr<Session>*>(PQinstanceData(c, remember_session<Session>));
  };
  switch (id) {
    case PGEVT_REGISTER: {
      auto* c = static_cast<PGEventRegister*>(info)->conn;
      return PQsetInstanceData(c, remember_session<Session>,
                               new std::shared_ptr<Session>(std::make_shared<Session>()));
    }
    case PGEVT_CONNRESET: // a new server session has prepared nothing
      if (auto* s = data(static_cast<PGEventConnReset*>(info)->conn))
        (*s)->prepared.clear();
      break;
    case PGEVT_CONNDESTROY:
      delete data(static_cast<PGEventConnDestroy*>(info)->conn);
      break;
    default:
      break;
  }
  return 1;
}

} // namespace

pg_connection pg_connection::borrow(pg_conn* conn, bool remember_prepared) {
  pg_connection out{std::shared_ptr<pg_conn>{conn, [](pg_conn*) {}}};
  if (!remember_prepared)
    return out;
  auto* c = raw(conn);
  auto proc = remember_session<session>;
  if (PQinstanceData(c, proc) == nullptr
      && PQregisterEventProc(c, proc, "outbox prepared statements", nullptr) == 0)
    return out; // cannot keep them: prepared anew by this object
  if (auto* kept = static_cast<std::shared_ptr<session>*>(PQinstanceData(c, proc)))
    out.session_ = *kept;
  return out;
}

caf::expected<pg_rows> pg_connection::exec(const char* name,
                                           const std::string& sql,
                                           const pg_params& params) {
  auto values = c_strings(params);
  return rows_or_error(name, PQexecParams(raw(conn_.get()), sql.c_str(),
                                          static_cast<int>(values.size()),
                                          nullptr, values.data(), nullptr,
                                          nullptr, 0));
}

caf::expected<pg_rows> pg_connection::exec_prepared(const char* name,
                                                    const std::string& sql,
                                                    const pg_params& params) {
  // The SQL text (with its table names) names the statement, so two
  // repositories of other schemas never collide on one connection.
  auto key = "ob_" + std::to_string(std::hash<std::string>{}(sql));
  auto* conn = raw(conn_.get());
  if (session_->prepared.count(key) == 0) {
    auto prepared = rows_or_error(name, PQprepare(conn, key.c_str(), sql.c_str(),
                                                  static_cast<int>(params.size()),
                                                  nullptr));
    if (!prepared)
      return prepared.error();
    session_->prepared.insert(key);
  }
  auto values = c_strings(params);
  return rows_or_error(name, PQexecPrepared(conn, key.c_str(),
                                            static_cast<int>(values.size()),
                                            values.data(), nullptr, nullptr, 0));
}

caf::expected<pg_rows> pg_connection::rows_or_error(const char* name,
                                                    pg_result* res) {
  auto status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    auto err = statement_error(name, res, raw(conn_.get()));
    PQclear(res);
    return err;
  }
  return pg_rows{res};
}

caf::error pg_connection::exec_script(const char* name, const std::string& sql) {
  auto* res = PQexec(raw(conn_.get()), sql.c_str());
  // A script of comments only has nothing to run: that is no error.
  if (res && PQresultStatus(res) == PGRES_EMPTY_QUERY) {
    PQclear(res);
    return caf::error{};
  }
  auto rows = rows_or_error(name, res);
  return rows ? caf::error{} : rows.error();
}

caf::error pg_connection::begin() { return exec_script("BEGIN", "BEGIN"); }

caf::error pg_connection::commit() { return exec_script("COMMIT", "COMMIT"); }

void pg_connection::rollback() {
  PQclear(PQexec(raw(conn_.get()), "ROLLBACK"));
}

bool pg_connection::ok() const {
  return PQstatus(raw(conn_.get())) == CONNECTION_OK;
}

bool pg_connection::in_transaction() const {
  return PQtransactionStatus(raw(conn_.get())) == PQTRANS_INTRANS;
}

bool pg_connection::in_failed_transaction() const {
  return PQtransactionStatus(raw(conn_.get())) == PQTRANS_INERROR;
}

std::string pg_connection::quote_identifier(const std::string& name) const {
  char* q = PQescapeIdentifier(raw(conn_.get()), name.c_str(), name.size());
  std::string out = q ? q : "\"\"";
  PQfreemem(q);
  return out;
}

std::string sqlstate_of(const caf::error& err) {
  if (err != errc::database_error)
    return {};
  // statement_error's text: "<name> failed (SQLSTATE xxxxx)".
  auto text = context_of(err);
  const std::string tag = "(SQLSTATE ";
  auto p = text.rfind(tag);
  if (p == std::string::npos || p + tag.size() + 6 != text.size())
    return {};
  return text.substr(p + tag.size(), 5);
}

bool is_data_error(const caf::error& err) {
  auto state = sqlstate_of(err);
  if (state.size() != 5)
    return false;
  auto cls = state.substr(0, 2);
  return cls == "22" || cls == "23" || cls == "54" || cls == "0A"
         || state == "XX001" || state == "XX002";
}

std::string pg_text_array(const std::vector<pg_param>& xs) {
  std::string out = "{";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      out += ',';
    if (!xs[i]) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char ch : *xs[i]) {
      if (ch == '"' || ch == '\\')
        out += '\\';
      out += ch;
    }
    out += '"';
  }
  return out + "}";
}

std::string pg_int_array(const std::vector<int64_t>& xs) {
  std::string out = "{";
  for (size_t i = 0; i < xs.size(); ++i)
    out += (i ? "," : "") + std::to_string(xs[i]);
  return out + "}";
}

std::vector<int32_t> parse_pg_int_array(const std::string& text) {
  std::vector<int32_t> out;
  std::string num;
  for (char c : text) {
    if ((c >= '0' && c <= '9') || c == '-') {
      num += c;
    } else if (!num.empty()) {
      out.push_back(std::stoi(num));
      num.clear();
    }
  }
  if (!num.empty())
    out.push_back(std::stoi(num));
  return out;
}

void bound_connect_timeout() {
  setenv("PGCONNECT_TIMEOUT", "10", /*overwrite*/ 0);
}

} // namespace outbox
