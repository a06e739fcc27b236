#include "core/domain/trace_context.hpp"

namespace outbox {

namespace {

bool lower_hex(const std::string& s, size_t from, size_t n) {
  for (size_t i = from; i < from + n; ++i) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  }
  return true;
}

bool all_zeros(const std::string& s, size_t from, size_t n) {
  return s.compare(from, n, std::string(n, '0')) == 0;
}

// W3C: lcalpha, DIGIT, "_", "-", "*", "/".
bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
         || c == '-' || c == '*' || c == '/';
}

// simple-key = lcalpha 0*255(key chars); multi-tenant-key = tenant-id "@"
// system-id, tenant-id = (lcalpha / DIGIT) 0*240(key chars), system-id =
// lcalpha 0*13(key chars).
bool valid_key(const std::string& k) {
  auto at = k.find('@');
  auto part_ok = [&](size_t from, size_t n, size_t max, bool digit_first) {
    if (n == 0 || n > max)
      return false;
    char first = k[from];
    if (!((first >= 'a' && first <= 'z') || (digit_first && first >= '0' && first <= '9')))
      return false;
    for (size_t i = from; i < from + n; ++i)
      if (!key_char(k[i]))
        return false;
    return true;
  };
  if (at == std::string::npos)
    return part_ok(0, k.size(), 256, false);
  return part_ok(0, at, 241, true) && part_ok(at + 1, k.size() - at - 1, 14, false);
}

// value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = %x21-2B /
// %x2D-3C / %x3E-7E (no comma, no "=").
bool valid_value(const std::string& v) {
  if (v.empty() || v.size() > 256 || v.back() == ' ')
    return false;
  for (char c : v)
    if (c < 0x20 || c > 0x7e || c == ',' || c == '=')
      return false;
  return true;
}

std::string trimmed(const std::string& s) {
  auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos)
    return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

} // namespace

std::optional<std::string> traceparent_problem(const std::string& v) {
  const std::string rule = "traceparent: must be W3C version-traceid-parentid-"
                           "flags (00-<32 hex>-<16 hex>-<2 hex>), lowercase hex";
  bool shape = v.size() >= 55 && v[2] == '-' && v[35] == '-' && v[52] == '-'
               && lower_hex(v, 0, 2) && lower_hex(v, 3, 32)
               && lower_hex(v, 36, 16) && lower_hex(v, 53, 2);
  if (!shape || v.compare(0, 2, "ff") == 0)
    return rule;
  // Version 00 ends there; a later one may add fields after a dash.
  bool version_00 = v.compare(0, 2, "00") == 0;
  if ((version_00 && v.size() != 55) || (!version_00 && v.size() > 55 && v[55] != '-'))
    return rule;
  if (all_zeros(v, 3, 32))
    return std::string{"traceparent: the trace id must not be all zeros"};
  if (all_zeros(v, 36, 16))
    return std::string{"traceparent: the parent id must not be all zeros"};
  return std::nullopt;
}

std::optional<std::string> tracestate_problem(const std::string& v) {
  if (v.size() > max_tracestate_bytes)
    return std::string{"tracestate: must have at most 512 bytes"};
  size_t members = 0;
  size_t from = 0;
  while (from <= v.size()) {
    auto comma = v.find(',', from);
    auto end = comma == std::string::npos ? v.size() : comma;
    auto member = trimmed(v.substr(from, end - from));
    from = end + 1;
    if (member.empty())
      continue; // W3C allows empty list members
    if (++members > max_tracestate_members)
      return std::string{"tracestate: must have at most 32 list members"};
    auto eq = member.find('=');
    if (eq == std::string::npos || !valid_key(member.substr(0, eq))
        || !valid_value(member.substr(eq + 1)))
      return std::string{"tracestate: list members must be W3C key=value "
                         "(lowercase key, printable ASCII value)"};
  }
  return std::nullopt;
}

std::string trace_id_of(const std::string& traceparent) {
  return traceparent_problem(traceparent) ? std::string{}
                                          : traceparent.substr(3, 32);
}

std::string trace_id_of(const std::map<std::string, std::string>& headers) {
  auto it = headers.find(traceparent_header);
  return it == headers.end() ? std::string{} : trace_id_of(it->second);
}

} // namespace outbox
