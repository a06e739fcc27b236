#define CAF_SUITE core.corpus
#include <caf/test/unit_test.hpp>

#include "core/amqp/wire.hpp"
#include "core/base/errors.hpp"
#include "core/base/text.hpp"
#include "core/config/config.hpp"
#include "tests/corpus/corpus.hpp"

using namespace outbox;
using namespace outbox::testing;

namespace {

std::string no_env(const char*) {
  return {};
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Why a message of the corpus is refused, "accepted" when nothing is.
std::string refusal(const corpus_message& m) {
  if (m.kind == "job") {
    auto job = parse_job_message(m.body);
    return job ? "accepted" : context_of(job.error());
  }
  auto content = read_result_message(m.body);
  return content.refused.empty() ? "accepted" : join(content.refused, "; ");
}

} // namespace

CAF_TEST(every config file of the corpus is refused with its rule or read) {
  auto files = corpus_config_files();
  CAF_CHECK_GREATER_OR_EQUAL(files.size(), 200u);
  size_t refused = 0;
  for (auto& f : files) {
    auto cfg = load_config(f.path, no_env);
    auto text = cfg ? std::string{"ok"} : render(cfg.error());
    if (!cfg)
      ++refused;
    if (f.expect == "ok" ? !cfg : !mentions(text, f.expect))
      CAF_ERROR(f.path << ": expected \"" << f.expect << "\", got: " << text);
    // A password in a bad URL is never shown.
    CAF_CHECK(!mentions(text, "s3cr3t"));
  }
  CAF_MESSAGE(files.size() << " config files, " << refused << " refused");
}

CAF_TEST(every message of the corpus is refused with a safe reason) {
  auto messages = corpus_messages();
  CAF_CHECK_GREATER_OR_EQUAL(messages.size(), 100u);
  for (auto& m : messages) {
    auto why = refusal(m);
    if (!mentions(why, m.expect) || why == "accepted")
      CAF_ERROR(m.kind << " " << m.name << ": expected \"" << m.expect
                       << "\", got: " << why.substr(0, 300));
    // A reason names the rule, never the message: it stays short.
    CAF_CHECK_LESS(why.size(), 400u);
  }
}
