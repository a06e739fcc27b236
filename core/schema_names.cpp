#include "core/schema_names.hpp"

#include <utility>

namespace outbox {

schema_names schema_names::with_prefix(const std::string& prefix) const {
  return {prefix + events, prefix + deliveries, prefix + migrations,
          prefix + publish_function};
}

std::string fill_names(std::string sql, const schema_names& names) {
  const std::pair<const char*, const std::string*> slots[] = {
    {"{{events}}", &names.events},
    {"{{deliveries}}", &names.deliveries},
    {"{{migrations}}", &names.migrations},
    {"{{publish_function}}", &names.publish_function}};
  for (auto [from, to] : slots) {
    std::string key = from;
    for (size_t p = 0; (p = sql.find(key, p)) != std::string::npos;
         p += to->size())
      sql.replace(p, key.size(), *to);
  }
  return sql;
}

std::string check_identifier(const std::string& name) {
  if (name.empty())
    return "must not be empty";
  if (name.size() > max_identifier_length)
    return "must have at most " + std::to_string(max_identifier_length)
           + " characters";
  auto lower = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!lower(name[0]))
    return "must start with a lower-case letter or '_'";
  for (char c : name)
    if (!lower(c) && !digit(c))
      return "may hold only lower-case letters, digits and '_'";
  return {};
}

} // namespace outbox
