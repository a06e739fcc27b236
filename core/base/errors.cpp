#include "core/base/errors.hpp"

#include <caf/message.hpp>

namespace outbox {

std::string to_string(errc x) {
  switch (x) {
    case errc::none: return "none";
    case errc::config_unreadable: return "config_unreadable";
    case errc::config_invalid: return "config_invalid";
    case errc::invalid_event: return "invalid_event";
    case errc::serialize_failed: return "serialize_failed";
    case errc::deserialize_failed: return "deserialize_failed";
    case errc::not_in_transaction: return "not_in_transaction";
    case errc::transaction_aborted: return "transaction_aborted";
    case errc::database_unavailable: return "database_unavailable";
    case errc::database_error: return "database_error";
    case errc::schema_mismatch: return "schema_mismatch";
    case errc::invalid_url: return "invalid_url";
    case errc::broker_unavailable: return "broker_unavailable";
    case errc::broker_error: return "broker_error";
    case errc::broker_timeout: return "broker_timeout";
    case errc::publish_failed: return "publish_failed";
    case errc::drain_refused: return "drain_refused";
  }
  return "unknown_outbox_error";
}

caf::error make_error(errc code, std::string context) {
  return caf::make_error(code, std::move(context));
}

namespace {

std::string context_text(const caf::message& ctx) {
  if (ctx.size() == 1 && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  return ctx.empty() ? std::string{} : caf::to_string(ctx);
}

} // namespace

std::string render_outbox_error(uint8_t code, caf::atom_value,
                                const caf::message& context) {
  auto text = to_string(static_cast<errc>(code));
  auto ctx = context_text(context);
  return ctx.empty() ? text : text + ": " + ctx;
}

std::string render(const caf::error& err) {
  if (err.category() == caf::atom("outbox"))
    return render_outbox_error(err.code(), err.category(), err.context());
  return caf::to_string(err);
}

std::string context_of(const caf::error& err) {
  if (err.category() != caf::atom("outbox"))
    return {};
  return context_text(err.context());
}

} // namespace outbox
