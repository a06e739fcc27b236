#define CAF_SUITE core.amqp_url_list
#include <caf/test/unit_test.hpp>

#include <string>
#include <vector>

#include "core/amqp/amqp_url_list.hpp"
#include "core/base/errors.hpp"
#include "tests/unit/case_check.hpp"

using namespace outbox;

namespace {

struct good_case {
  const char* name;
  std::string list;
  std::vector<std::string> urls;
};

struct bad_case {
  const char* name;
  std::string list;
  std::string rule; ///< a part of the error's text
};

const std::string a = "amqp://u:secret@h1:5672/";
const std::string b = "amqps://u:secret@h2/?cacertfile=/etc/a%2Cb.pem";

} // namespace

CAF_TEST(broker lists are split into their urls in order) {
  std::vector<good_case> cases{
    {"one url", a, {a}},
    {"two urls", a + "," + b, {a, b}},
    {"blanks around entries", "  " + a + " ,\t" + b + " ", {a, b}},
    {"a comma as %2C stays in its url", b, {b}},
    {"sixteen", [] {
       std::string s = a;
       for (int i = 1; i < 16; ++i)
         s += "," + a;
       return s;
     }(), std::vector<std::string>(16, a)},
  };
  for (auto& c : cases) {
    auto urls = split_amqp_urls(c.list);
    OUTBOX_CHECK_CASE(c.name, urls);
    if (urls)
      OUTBOX_CHECK_CASE(c.name, *urls == c.urls);
  }
}

CAF_TEST(bad broker lists name the entry and never echo it) {
  std::vector<bad_case> cases{
    {"empty", "", "is empty: give an amqp[s]:// URL"},
    {"blank", "   ", "is empty: give an amqp[s]:// URL"},
    {"empty entry", a + ",," + a, "broker 2 of 3 is empty"},
    {"trailing comma", a + ",", "broker 2 of 2 is empty"},
    {"leading comma", "," + a, "broker 1 of 2 is empty"},
    {"bad scheme second", a + ",http://u:secret@h/", "broker 2 of 2 is not a valid"},
    {"bad port first", "amqp://u:secret@h:99999/," + a, "broker 1 of 2"},
    {"tls file on amqp", a + ",amqp://u:secret@h/?cacertfile=/ca.pem",
     "broker 2 of 2 has a query"},
    {"seventeen", [] {
       std::string s = a;
       for (int i = 1; i < 17; ++i)
         s += "," + a;
       return s;
     }(), "names 17 brokers; a list holds at most 16"},
  };
  for (auto& c : cases) {
    auto urls = split_amqp_urls(c.list);
    OUTBOX_CHECK_CASE(c.name, !urls);
    if (urls)
      continue;
    auto text = render(urls.error());
    OUTBOX_CHECK_CASE(c.name, urls.error() == errc::invalid_url);
    OUTBOX_CHECK_CASE(c.name, text.find(c.rule) != std::string::npos);
    OUTBOX_CHECK_CASE_EQUAL(c.name, text.find("secret"), std::string::npos);
  }
}
