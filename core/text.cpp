#include "core/text.hpp"

namespace outbox {

std::string join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i)
    out += (i == 0 ? "" : sep) + xs[i];
  return out;
}

} // namespace outbox
