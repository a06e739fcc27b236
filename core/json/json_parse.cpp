#include "core/json/json_parse.hpp"

#include <cstring>
#include <set>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "core/base/text.hpp"

namespace outbox {

namespace {

// Forwards every SAX event to the document and stops the parse once the
// nesting passes the limit: the document never holds more than allowed.
class depth_guard {
public:
  depth_guard(rapidjson::Document& doc, unsigned max_depth)
    : doc_(doc), max_depth_(max_depth) {
  }

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned i) { return doc_.Uint(i); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t i) { return doc_.Uint64(i); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    return doc_.RawNumber(s, n, copy);
  }
  // RapidJSON checks the bytes of the text, not what an escape decodes
  // to: "\udc00" (a lone low surrogate) would become invalid UTF-8 that
  // the database refuses.
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return utf8(s, n) && doc_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    return utf8(s, n) && doc_.Key(s, n, copy);
  }
  bool StartObject() { return enter() && doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) {
    --depth_;
    return doc_.EndObject(n);
  }
  bool StartArray() { return enter() && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) {
    --depth_;
    return doc_.EndArray(n);
  }

  bool too_deep() const { return too_deep_; }
  bool bad_utf8() const { return bad_utf8_; }

private:
  bool utf8(const char* s, rapidjson::SizeType n) {
    if (is_valid_utf8({s, n}))
      return true;
    bad_utf8_ = true;
    return false;
  }

  bool enter() {
    if (++depth_ <= max_depth_)
      return true;
    too_deep_ = true;
    return false;
  }

  rapidjson::Document& doc_;
  unsigned max_depth_;
  unsigned depth_ = 0;
  bool too_deep_ = false;
  bool bad_utf8_ = false;
};

constexpr unsigned parse_flags = rapidjson::kParseIterativeFlag
                                 | rapidjson::kParseValidateEncodingFlag;

std::string parse_error_text(const rapidjson::ParseResult& result) {
  switch (result.Code()) {
    case rapidjson::kParseErrorStringInvalidEncoding:
      return "a string is not valid UTF-8";
    case rapidjson::kParseErrorNumberTooBig:
      return "a number is too large for a 64-bit floating point value";
    default:
      return "not valid JSON at offset " + std::to_string(result.Offset())
             + ": " + rapidjson::GetParseError_En(result.Code());
  }
}

} // namespace

std::optional<std::string> parse_json(std::string_view text,
                                      const json_limits& limits,
                                      rapidjson::Document& doc) {
  doc.SetNull();
  if (text.size() > limits.max_bytes)
    return "larger than " + std::to_string(limits.max_bytes) + " bytes";
  if (std::memchr(text.data(), 0, text.size()) != nullptr)
    return "contains a NUL byte";
  depth_guard guard{doc, limits.max_depth};
  rapidjson::ParseResult result;
  auto generate = [&](rapidjson::Document&) {
    rapidjson::MemoryStream stream{text.data(), text.size()};
    rapidjson::Reader reader;
    result = reader.Parse<parse_flags>(stream, guard);
    return !result.IsError();
  };
  doc.Populate(generate);
  if (guard.too_deep())
    return "nested deeper than " + std::to_string(limits.max_depth) + " levels";
  if (guard.bad_utf8()) {
    doc.SetNull();
    return "a string is not valid UTF-8";
  }
  if (result.IsError()) {
    doc.SetNull();
    return parse_error_text(result);
  }
  return std::nullopt;
}

bool has_duplicate_keys(const rapidjson::Value& object) {
  std::set<std::string_view> seen;
  for (auto& m : object.GetObject())
    if (!seen.emplace(m.name.GetString(), m.name.GetStringLength()).second)
      return true;
  return false;
}

} // namespace outbox
