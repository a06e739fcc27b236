#include "core/schema_names.hpp"

namespace outbox {

schema_names schema_names::with_prefix(const std::string& prefix) const {
  return {prefix + events, prefix + deliveries, prefix + migrations,
          prefix + publish_function};
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
