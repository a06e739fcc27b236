// Debian's chromium without a display, for the dashboard's tests: a page
// loaded, its scripts run for a stretch of virtual time (the page's timers
// fire at once, while a fetch holds the clock until it is answered), then
// the DOM or a picture of it. Chromium 156 has only the new headless mode
// (`--headless`); as root it needs --no-sandbox. Each call uses a profile
// of its own under `scratch_dir`, removed afterwards.
#pragma once

#include <string>

namespace outbox::testing {

struct headless_chromium {
  std::string scratch_dir; ///< the test's own folder
  int virtual_ms = 6000;   ///< three polls of the dashboard

  /// The DOM after `virtual_ms`, as HTML ("" when chromium failed; its
  /// messages are in scratch_dir/chromium.log).
  std::string dump_dom(const std::string& url) const;

  /// A 1280x800 PNG of the page after `virtual_ms`; whether it was written.
  bool screenshot(const std::string& url, const std::string& png) const;

  /// Whether `chromium` is on the PATH.
  static bool installed();
};

} // namespace outbox::testing
