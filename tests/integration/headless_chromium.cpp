#include "tests/integration/headless_chromium.hpp"

#include <sys/stat.h>

#include "tests/integration/child_process.hpp"

namespace outbox::testing {

namespace {

// Without a display, a D-Bus or a GPU: the flags that keep chromium from
// looking for them, and from writing into $HOME.
std::string command(const headless_chromium& c, const std::string& what,
                    const std::string& url) {
  // In braces: run_command's own 2>&1 must not pull chromium's noise into
  // the DOM.
  return "{ chromium --headless --no-sandbox --disable-gpu --hide-scrollbars"
         " --no-first-run --disable-extensions --disable-dev-shm-usage"
         " --user-data-dir='" + c.scratch_dir + "/chromium-profile'"
         " --virtual-time-budget=" + std::to_string(c.virtual_ms) + " " + what
         + " '" + url + "' 2>>'" + c.scratch_dir + "/chromium.log'; }";
}

} // namespace

std::string headless_chromium::dump_dom(const std::string& url) const {
  auto [rc, out] = run_command(command(*this, "--dump-dom", url));
  run_command("rm -rf '" + scratch_dir + "/chromium-profile'");
  return rc == 0 ? out : "";
}

bool headless_chromium::screenshot(const std::string& url,
                                   const std::string& png) const {
  auto rc = run_command(command(*this, "--window-size=1280,800 --screenshot='"
                                         + png + "'",
                                url))
              .first;
  run_command("rm -rf '" + scratch_dir + "/chromium-profile'");
  struct stat st{};
  return rc == 0 && stat(png.c_str(), &st) == 0 && st.st_size > 0;
}

bool headless_chromium::installed() {
  return run_command("command -v chromium").first == 0;
}

} // namespace outbox::testing
