// The soak's chart: one SVG file with four small panels over the soak's
// minutes (completed/min, commit→published p99, both tables' size, dead
// tuples). Written by hand: the stack has no charting library, and an SVG
// of a few polylines and labelled ticks needs none.
#pragma once

#include <string>

#include "tools/benchmark/soak.hpp"

namespace outbox::bench {

/// The chart of `r` as an SVG document.
std::string soak_chart_svg(const soak_results& r);

/// Writes the chart to `path`; false when the file cannot be written.
bool write_soak_chart(const soak_results& r, const std::string& path);

} // namespace outbox::bench
