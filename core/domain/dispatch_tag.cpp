#include "core/domain/dispatch_tag.hpp"

#include <cstdint>
#include <cstdio>

namespace outbox {

std::string dispatch_tag_of(const std::string& database) {
  uint32_t h = 2166136261u;
  for (unsigned char c : database) {
    h ^= c;
    h *= 16777619u;
  }
  char buf[dispatch_tag_length + 1];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

std::string tag_in(const std::string& dispatch_id) {
  if (dispatch_id.size() != 36 || dispatch_id[dispatch_tag_length] != '-')
    return {};
  std::string tag;
  for (size_t i = 0; i < dispatch_tag_length; ++i) {
    char c = dispatch_id[i];
    if (c >= 'A' && c <= 'F')
      c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return {};
    tag += c;
  }
  return tag;
}

std::string new_dispatch_id_sql(const std::string& tag) {
  if (tag.empty())
    return "gen_random_uuid()";
  // The tag is ours (dispatch_tag_of): hex digits only, safe in a literal.
  return "overlay(gen_random_uuid()::text placing '" + tag
         + "' from 1 for 8)::uuid";
}

std::vector<std::vector<size_t>>
split_by_tag(const std::vector<std::string>& dispatch_ids,
             const std::vector<std::string>& tags) {
  std::vector<std::vector<size_t>> out(tags.size());
  for (size_t i = 0; i < dispatch_ids.size(); ++i) {
    auto tag = tag_in(dispatch_ids[i]);
    size_t found = tags.size();
    for (size_t t = 0; t < tags.size() && found == tags.size(); ++t)
      if (!tag.empty() && tags[t] == tag)
        found = t;
    if (found < tags.size()) {
      out[found].push_back(i);
      continue;
    }
    for (auto& each : out)
      each.push_back(i);
  }
  return out;
}

} // namespace outbox
