#include "core/domain/route.hpp"

namespace outbox {

const char* to_string(merge_mode x) {
  switch (x) {
    case merge_mode::replace: return "replace";
    case merge_mode::json_merge: return "json-merge";
    case merge_mode::none: return "none";
  }
  return "replace";
}

std::optional<merge_mode> parse_merge_mode(const std::string& text) {
  if (text == "replace") return merge_mode::replace;
  if (text == "json-merge") return merge_mode::json_merge;
  if (text == "none") return merge_mode::none;
  return std::nullopt;
}

} // namespace outbox
