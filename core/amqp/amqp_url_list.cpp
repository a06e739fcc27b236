#include "core/amqp/amqp_url_list.hpp"

#include "core/amqp/amqp_url.hpp"
#include "core/base/errors.hpp"

namespace outbox {

namespace {

std::string trimmed(const std::string& s) {
  auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> split_on_commas(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    auto end = list.find(',', start);
    out.push_back(trimmed(list.substr(start, end - start)));
    if (end == std::string::npos)
      return out;
    start = end + 1;
  }
}

} // namespace

caf::expected<std::vector<std::string>> split_amqp_urls(const std::string& list) {
  auto urls = split_on_commas(list);
  if (urls.size() > max_amqp_urls)
    return make_error(errc::invalid_url,
                      "names " + std::to_string(urls.size())
                        + " brokers; a list holds at most "
                        + std::to_string(max_amqp_urls));
  for (size_t i = 0; i < urls.size(); ++i) {
    // One URL keeps the words it always had; in a list, say which entry.
    auto which = urls.size() == 1 ? std::string{}
                                  : "broker " + std::to_string(i + 1) + " of "
                                      + std::to_string(urls.size()) + " ";
    if (urls[i].empty() && urls.size() == 1)
      return make_error(errc::invalid_url, "is empty: give an amqp[s]:// URL");
    if (urls[i].empty())
      return make_error(errc::invalid_url,
                        which + "is empty (URLs are separated by single commas; "
                                "write a comma inside a URL as %2C)");
    if (auto parts = parse_amqp_url(urls[i]); !parts)
      return make_error(errc::invalid_url, which + context_of(parts.error()));
  }
  return urls;
}

} // namespace outbox
