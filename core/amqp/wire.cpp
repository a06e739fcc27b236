// The ids as the wire writes them, and the JSON helpers the job message
// (wire_job.cpp) and the result message (wire_result.cpp) share.
#include "core/amqp/wire.hpp"

#include <cctype>
#include <cstring>

#include "core/amqp/wire_detail.hpp"
#include "core/json/json_parse.hpp"

namespace outbox {

std::optional<int64_t> parse_decimal_id(const std::string& s) {
  if (s.empty() || s.size() > 18)
    return std::nullopt;
  int64_t id = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return std::nullopt;
    id = id * 10 + (c - '0');
  }
  return id > 0 ? std::optional<int64_t>{id} : std::nullopt;
}

bool is_uuid(const std::string& s) {
  if (s.size() != 36)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i])))
      return false;
  }
  return true;
}

namespace wire_detail {

// Delivery ids travel as decimal strings (JSON numbers lose precision in
// many languages); plain integers are accepted too.
std::optional<int64_t> read_id(const rapidjson::Value& v) {
  if (v.IsInt64())
    return v.GetInt64() > 0 ? std::optional<int64_t>{v.GetInt64()} : std::nullopt;
  if (!v.IsString())
    return std::nullopt;
  return parse_decimal_id({v.GetString(), v.GetStringLength()});
}

void write_string(json_writer_t& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// One rule for the job wherever a message names it: a non-empty string
// without NUL (the database's text cannot hold one, and no route names one).
std::optional<std::string> read_job(const rapidjson::Value& obj,
                                    std::string& out) {
  auto it = obj.FindMember("job");
  if (it == obj.MemberEnd())
    return "job is missing";
  if (!it->value.IsString())
    return "job must be a string";
  if (it->value.GetStringLength() == 0)
    return "job must not be empty";
  if (std::memchr(it->value.GetString(), 0, it->value.GetStringLength()))
    return "job must not contain a NUL character";
  out.assign(it->value.GetString(), it->value.GetStringLength());
  return std::nullopt;
}

// Invalid UTF-8 is refused here (the database would refuse the whole batch
// of results it came in, again on every try), and so is nesting that could
// exhaust the reader's stack.
std::optional<std::string> parse_message(const std::string& body,
                                         rapidjson::Document& doc) {
  return parse_json(body, message_json_limits, doc);
}

} // namespace wire_detail

} // namespace outbox
