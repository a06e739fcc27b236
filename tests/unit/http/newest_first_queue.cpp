#define CAF_SUITE http.newest_first_queue
#include <caf/test/unit_test.hpp>

#include <future>
#include <mutex>
#include <string>

#include "http/newest_first_queue.hpp"

using namespace outbox;

CAF_TEST(the newest waiting connection is served first and all are served) {
  std::string order;
  std::mutex m;
  std::promise<void> release;
  auto released = release.get_future().share();
  std::promise<void> busy;
  {
    newest_first_queue q{1};
    q.enqueue([&] {
      busy.set_value();
      released.wait(); // holds the only thread, as an idle connection does
      std::lock_guard<std::mutex> g{m};
      order += "a";
    });
    busy.get_future().wait();
    for (auto c : {"b", "c", "d"})
      q.enqueue([&, c] {
        std::lock_guard<std::mutex> g{m};
        order += c;
      });
    release.set_value();
    q.shutdown(); // serves what waits, then joins
  }
  CAF_CHECK_EQUAL(order, "adcb");
}
