#include "tests/faults/ordering_checks.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace outbox::testing {

std::vector<journal_run> read_journals(const std::vector<std::string>& paths) {
  std::vector<journal_run> out;
  for (auto& path : paths) {
    std::ifstream in{path};
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields{line};
      journal_run r;
      if (fields >> r.key >> r.seq >> r.delivery_id >> r.dispatch_id
          >> r.start_us >> r.end_us >> r.outcome)
        out.push_back(std::move(r));
    }
  }
  return out;
}

overlap_report find_overlaps(std::map<std::string, std::vector<window>> by_key) {
  overlap_report out;
  for (auto& [key, ws] : by_key) {
    ++out.keys;
    out.windows += static_cast<int64_t>(ws.size());
    std::sort(ws.begin(), ws.end(), [](const window& a, const window& b) {
      return a.start < b.start;
    });
    // The latest end so far, not just the previous one's: a long window
    // may cover several short ones after it. Kept for the two deliveries
    // that end latest, so that a window is compared with the latest end
    // of another delivery than its own.
    int64_t first_end = INT64_MIN, second_end = INT64_MIN;
    int64_t first_delivery = -1;
    for (auto& w : ws) {
      auto busy_until = w.delivery_id != 0 && w.delivery_id == first_delivery
                          ? second_end
                          : first_end;
      if (w.start < busy_until) {
        if (out.overlapping++ == 0)
          out.first = "key " + key + ": a window starting at "
                      + std::to_string(w.start) + " us began before "
                      + std::to_string(busy_until) + " us";
      }
      if (w.delivery_id != 0 && w.delivery_id == first_delivery) {
        first_end = std::max(first_end, w.end);
      } else if (w.end > first_end) {
        second_end = first_end;
        first_end = w.end;
        first_delivery = w.delivery_id;
      } else {
        second_end = std::max(second_end, w.end);
      }
    }
  }
  return out;
}

std::map<std::string, std::vector<window>>
relay_windows(const std::vector<relay_dispatch>& ds) {
  std::map<std::string, std::vector<window>> out;
  for (auto& d : ds)
    out[d.key].push_back({d.start_us, d.end_us.value_or(INT64_MAX)});
  return out;
}

std::map<std::string, std::vector<window>>
worker_windows(const std::vector<journal_run>& runs,
               const std::map<std::string, relay_dispatch>& by_dispatch,
               int64_t hold_us, int64_t& after_end) {
  std::map<std::string, std::vector<window>> out;
  after_end = 0;
  for (auto& r : runs) {
    auto it = by_dispatch.find(r.dispatch_id);
    auto relay_end = it == by_dispatch.end() || !it->second.end_us
                       ? INT64_MAX
                       : *it->second.end_us;
    if (relay_end < r.start_us) {
      ++after_end;
      continue;
    }
    auto held_until = relay_end > INT64_MAX - hold_us ? INT64_MAX
                                                      : relay_end + hold_us;
    out[r.key].push_back({r.start_us, std::min(r.end_us, held_until),
                          r.delivery_id});
  }
  return out;
}

order_report check_order(std::vector<completion> cs,
                         const std::map<std::string, int64_t>& expected) {
  std::sort(cs.begin(), cs.end(), [](const completion& a, const completion& b) {
    return a.key != b.key ? a.key < b.key : a.applied_us < b.applied_us;
  });
  order_report out;
  out.completions = static_cast<int64_t>(cs.size());
  out.fewest_per_key = INT64_MAX;
  std::map<std::string, std::vector<int64_t>> seqs;
  for (auto& c : cs)
    seqs[c.key].push_back(c.seq);
  for (auto& [key, want] : expected)
    seqs[key]; // a key without any completion is not dense either
  for (auto& [key, got] : seqs) {
    ++out.keys;
    out.fewest_per_key =
      std::min(out.fewest_per_key, static_cast<int64_t>(got.size()));
    for (size_t i = 1; i < got.size(); ++i)
      out.out_of_order += got[i] < got[i - 1];
    auto want = expected.count(key) ? expected.at(key) : 0;
    bool dense = static_cast<int64_t>(got.size()) == want;
    for (size_t i = 0; dense && i < got.size(); ++i)
      dense = got[i] == static_cast<int64_t>(i) + 1;
    if (!dense && out.keys_not_dense++ == 0)
      out.first = "key " + key + ": " + std::to_string(got.size())
                  + " completions of " + std::to_string(want)
                  + " are not 1, 2, 3, ... in the order applied";
  }
  if (out.keys == 0)
    out.fewest_per_key = 0;
  return out;
}

} // namespace outbox::testing
