#include "tools/benchmark/soak_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace outbox::bench {

namespace {

// The layout, in SVG user units: a title line, then 2 × 2 panels, each a
// plot with room for its title above, tick labels left and below.
constexpr double width = 900, title_height = 40, panel_w = 450, panel_h = 260;
constexpr double left = 70, right = 24, top = 40, bottom = 44;
constexpr double plot_w = panel_w - left - right, plot_h = panel_h - top - bottom;

struct line {
  std::string name, color;
  std::vector<double> ys;
};

struct panel {
  std::string title;
  std::vector<line> lines;
};

std::string num(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, x);
  return buf;
}

// A step of 1, 2 or 5 times a power of ten giving about four ticks to `max`.
double nice_step(double max) {
  double raw = max > 0 ? max / 4 : 0.25;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

// A tick's label: thousands as k, millions as M; decimals only where the
// step needs them.
std::string tick_label(double v, double step) {
  if (std::abs(v) >= 1e6 && step >= 1e5)
    return num(step >= 1e6 ? "%.0fM" : "%.1fM", v / 1e6);
  if (std::abs(v) >= 1e3 && step >= 100)
    return num(step >= 1e3 ? "%.0fk" : "%.1fk", v / 1e3);
  return num(step >= 1 ? "%.0f" : step >= 0.1 ? "%.1f" : "%.2f", v);
}

// The axes' upper ends: a whole number of steps at or above the data.
double axis_top(double max, double step) {
  return std::max(step, std::ceil(max / step - 1e-9) * step);
}

void grid(std::ostringstream& out, double y_top, double y_step, double x_top,
          double x_step) {
  out << "<g class=\"axes\" font-size=\"11\" fill=\"#444\">\n";
  for (int i = 0; i <= static_cast<int>(std::lround(y_top / y_step)); ++i) {
    double v = i * y_step, y = plot_h - v / y_top * plot_h;
    out << "<line x1=\"0\" x2=\"" << plot_w << "\" y1=\"" << num("%.1f", y)
        << "\" y2=\"" << num("%.1f", y) << "\" stroke=\"#ddd\"/>"
        << "<text x=\"-6\" y=\"" << num("%.1f", y + 4)
        << "\" text-anchor=\"end\">" << tick_label(v, y_step) << "</text>\n";
  }
  for (int i = 0; i <= static_cast<int>(std::lround(x_top / x_step)); ++i) {
    double v = i * x_step, x = v / x_top * plot_w;
    out << "<line x1=\"" << num("%.1f", x) << "\" x2=\"" << num("%.1f", x)
        << "\" y1=\"" << plot_h << "\" y2=\"" << plot_h + 4 << "\" stroke=\"#444\"/>"
        << "<text x=\"" << num("%.1f", x) << "\" y=\"" << plot_h + 17
        << "\" text-anchor=\"middle\">" << tick_label(v, x_step) << "</text>\n";
  }
  out << "<line x1=\"0\" x2=\"0\" y1=\"0\" y2=\"" << plot_h << "\" stroke=\"#444\"/>"
      << "<line x1=\"0\" x2=\"" << plot_w << "\" y1=\"" << plot_h << "\" y2=\""
      << plot_h << "\" stroke=\"#444\"/>\n"
      << "<text x=\"" << plot_w / 2 << "\" y=\"" << plot_h + 34
      << "\" text-anchor=\"middle\">minutes into the soak</text>\n</g>\n";
}

void plot_line(std::ostringstream& out, const line& l, const std::vector<double>& xs,
               double y_top, double x_top) {
  std::ostringstream points, dots;
  for (size_t i = 0; i < xs.size() && i < l.ys.size(); ++i) {
    auto x = num("%.1f", xs[i] / x_top * plot_w);
    auto y = num("%.1f", plot_h - l.ys[i] / y_top * plot_h);
    points << (i ? " " : "") << x << "," << y;
    dots << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"2.5\"/>";
  }
  out << "<polyline fill=\"none\" stroke=\"" << l.color << "\" stroke-width=\"2\""
      << " points=\"" << points.str() << "\"/>\n<g fill=\"" << l.color << "\">"
      << dots.str() << "</g>\n";
}

// The panel's title left, a legend right when it has more than one line.
void heading(std::ostringstream& out, const panel& p) {
  out << "<text x=\"0\" y=\"-16\" font-size=\"13\" font-weight=\"bold\">"
      << p.title << "</text>\n";
  if (p.lines.size() < 2)
    return;
  double x = plot_w;
  for (auto it = p.lines.rbegin(); it != p.lines.rend(); ++it) {
    out << "<text x=\"" << x << "\" y=\"-16\" font-size=\"11\" text-anchor=\"end\""
        << " fill=\"" << it->color << "\">" << it->name << "</text>\n";
    x -= 6.5 * static_cast<double>(it->name.size()) + 12;
  }
}

void draw_panel(std::ostringstream& out, const panel& p, const std::vector<double>& xs,
                double x0, double y0) {
  double max = 0;
  for (auto& l : p.lines)
    for (auto y : l.ys)
      max = std::max(max, y);
  double y_step = nice_step(max), y_top = axis_top(max, y_step);
  double x_max = xs.empty() ? 1 : xs.back();
  double x_step = nice_step(x_max), x_top = axis_top(x_max, x_step);
  out << "<g class=\"panel\" transform=\"translate(" << x0 + left << ","
      << y0 + top << ")\">\n";
  heading(out, p);
  grid(out, y_top, y_step, x_top, x_step);
  for (auto& l : p.lines)
    plot_line(out, l, xs, y_top, x_top);
  out << "</g>\n";
}

std::vector<panel> panels_of(const soak_results& r) {
  const char* blue = "#1f77b4";
  const char* red = "#d62728";
  panel done{"completed deliveries per minute", {{"completed", blue, {}}}};
  panel p99{"commit\u2192published p99 (ms)", {{"p99", blue, {}}}};
  panel size{"table + index size (MiB)", {{"events", blue, {}}, {"deliveries", red, {}}}};
  panel dead{"dead tuples", {{"events", blue, {}}, {"deliveries", red, {}}}};
  constexpr double mib = 1024.0 * 1024.0;
  for (auto& s : r.series) {
    done.lines[0].ys.push_back(s.per_minute);
    p99.lines[0].ys.push_back(s.p99_ms);
    size.lines[0].ys.push_back(static_cast<double>(s.events.bytes) / mib);
    size.lines[1].ys.push_back(static_cast<double>(s.deliveries.bytes) / mib);
    dead.lines[0].ys.push_back(static_cast<double>(s.events.dead));
    dead.lines[1].ys.push_back(static_cast<double>(s.deliveries.dead));
  }
  return {done, p99, size, dead};
}

std::string title_of(const soak_results& r) {
  return "Outbox soak: " + num("%g", r.minutes) + " min at " + num("%.0f", r.rate)
         + " events/s (half of A), retention "
         + (r.retention_minutes > 0 ? num("%g min", r.retention_minutes)
                                    : std::string{"off"})
         + (r.verdict.flat() ? " \u2014 flat" : " \u2014 not flat");
}

} // namespace

std::string soak_chart_svg(const soak_results& r) {
  std::vector<double> xs;
  for (auto& s : r.series)
    xs.push_back(s.end_s / 60);
  double height = title_height + 2 * panel_h;
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << width / 2 << "\" y=\"26\" font-size=\"16\""
      << " text-anchor=\"middle\">" << title_of(r) << "</text>\n";
  auto panels = panels_of(r);
  for (size_t i = 0; i < panels.size(); ++i)
    draw_panel(out, panels[i], xs, static_cast<double>(i % 2) * panel_w,
               title_height + static_cast<double>(i / 2) * panel_h);
  out << "</svg>\n";
  return out.str();
}

bool write_soak_chart(const soak_results& r, const std::string& path) {
  std::ofstream out{path};
  out << soak_chart_svg(r);
  out.close();
  return static_cast<bool>(out);
}

} // namespace outbox::bench
