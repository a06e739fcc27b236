#include "http/prometheus_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace outbox {

namespace {

bool valid_name(const std::string& n) {
  if (n.empty() || (n[0] >= '0' && n[0] <= '9'))
    return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '_' || c == ':';
  });
}

const char* type_name(prometheus_text::kind k) {
  switch (k) {
    case prometheus_text::kind::counter:
      return "counter";
    case prometheus_text::kind::gauge:
      return "gauge";
    case prometheus_text::kind::histogram:
      return "histogram";
  }
  return "untyped";
}

// HELP text escapes backslashes and newlines only.
std::string escape_help(const std::string& h) {
  std::string out;
  for (char c : h) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

} // namespace

std::string escape_label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_metric_value(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else {
    // The shortest of 15 or 17 digits that reads back as the same value:
    // bucket bounds such as 0.005 stay as written.
    std::snprintf(buf, sizeof buf, "%.15g", v);
    if (std::strtod(buf, nullptr) != v)
      std::snprintf(buf, sizeof buf, "%.17g", v);
  }
  return buf;
}

void prometheus_text::family(const std::string& name, kind k,
                             const std::string& help) {
  // Our own names: a bad one is a bug, not an input.
  if (!valid_name(name)
      || std::find(seen_.begin(), seen_.end(), name) != seen_.end()
      || (k == kind::counter
          && (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0)))
    throw std::logic_error("metric family name: " + name);
  seen_.push_back(name);
  current_ = name;
  out_ += "# HELP " + name + " " + escape_help(help) + "\n";
  out_ += "# TYPE " + name + " " + type_name(k) + "\n";
}

void prometheus_text::sample(const metric_labels& labels, double value,
                             const std::string& suffix) {
  out_ += current_ + suffix;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (auto& [k, v] : labels) {
      if (!valid_name(k) || k.find(':') != std::string::npos)
        throw std::logic_error("metric label name: " + k);
      out_ += (first ? "" : ",") + k + "=\"" + escape_label_value(v) + "\"";
      first = false;
    }
    out_ += '}';
  }
  out_ += ' ' + format_metric_value(value) + '\n';
}

} // namespace outbox
