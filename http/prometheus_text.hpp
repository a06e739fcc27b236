// The Prometheus text exposition format (version 0.0.4): metric families
// with their HELP and TYPE lines, samples with escaped label values. The
// names are ours and checked here; label values may come from the config
// (queue names), so they are escaped, never trusted.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace outbox {

using metric_labels = std::vector<std::pair<std::string, std::string>>;

class prometheus_text {
public:
  enum class kind { counter, gauge, histogram };

  /// Starts a family. `name` must match [a-zA-Z_:][a-zA-Z0-9_:]* and not
  /// have been started before; counters end in `_total`.
  void family(const std::string& name, kind k, const std::string& help);

  /// A sample of the current family (for histograms: `suffix` is
  /// "_bucket", "_sum" or "_count").
  void sample(const metric_labels& labels, double value,
              const std::string& suffix = "");

  /// The exposition so far.
  const std::string& str() const { return out_; }

private:
  std::string out_;
  std::string current_;
  std::vector<std::string> seen_;
};

/// "\\", "\"" and newlines escaped as the text format wants in label values.
std::string escape_label_value(const std::string& v);

/// A number as the text format writes it: integers without a fraction,
/// "+Inf", "-Inf" and "NaN".
std::string format_metric_value(double v);

} // namespace outbox
