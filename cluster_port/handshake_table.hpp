#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace outbox::cluster_port {

/// Why a connection to the cluster port was refused before it joined.
enum class refusal : uint8_t {
  no_certificate,     ///< TLS without a client certificate
  unknown_ca,         ///< a certificate of another CA (either side refused)
  bad_certificate,    ///< a certificate the CA signed that fails otherwise
  protocol_garbage,   ///< bytes that are neither TLS nor a BASP header
  closed_early,       ///< the peer left before its handshake was done
  handshake_timeout,  ///< no handshake within the deadline
  too_many_half_open, ///< its address had too many unfinished handshakes
  oversized_header,   ///< a plain BASP header announcing too much payload
};
constexpr size_t refusal_kinds = 8;

/// The label of `r` in logs and metrics, e.g. "no_certificate".
const char* refusal_name(refusal r);

/// How long a stranger may stay and how much it may hold.
struct port_limits {
  std::chrono::milliseconds handshake_deadline{5000};
  size_t half_open_per_address = 16;
  /// A plain port's first BASP header may announce at most this payload
  /// (a client handshake is a few hundred bytes).
  uint32_t max_first_payload = 64 * 1024;
};

/// The connections of one listening port whose handshake is not done:
/// when each came, from which address, and (for a plain port) the bytes of
/// its first BASP header so far. Not thread-safe; cluster_port/guard.cpp
/// holds it under a mutex. A decision is returned once per connection:
/// the caller counts and logs it, and closes the connection.
class handshake_table {
public:
  using clock = std::chrono::steady_clock;

  explicit handshake_table(port_limits limits) : limits_(limits) {
  }

  /// A new connection `fd` from `address`: refused at once when that
  /// address already has the bound of unfinished handshakes.
  std::optional<refusal> accepted(int fd, const std::string& address,
                                  clock::time_point now);

  /// Its handshake is done: it is a member's (or a client's) now.
  void completed(int fd);

  /// Its handshake failed for `why`: `why`, or nothing when the connection
  /// was refused already (the failure is the close that refusal caused)
  /// or is not known here.
  std::optional<refusal> failed(int fd, refusal why);

  /// What a plain port does with bytes it read before the handshake.
  struct plain_verdict {
    bool pass = true;               ///< false: fail the read, close
    std::optional<refusal> refused; ///< to count and log (once)
  };

  /// Bytes a plain port read from `fd` before its handshake. Once the
  /// first 32-byte BASP header is complete: refused when its operation is
  /// unknown or its payload larger than the bound; otherwise still held
  /// to the deadline and the bound until its payload has been read too
  /// (the peer's handshake message), then done here. Bytes of a connection
  /// refused already never pass: a peer refused for its address's bound
  /// or its deadline may have sent a header that no check has read.
  plain_verdict plain_bytes(int fd, const char* data, size_t size);

  /// The connections past the deadline at `now`, each returned once
  /// (refused as handshake_timeout).
  std::vector<int> overdue(clock::time_point now);

  /// `fd` was closed: forgotten (a new connection may get its number).
  void closed(int fd);

  bool tracks(int fd) const {
    return open_.count(fd) > 0;
  }

  /// The peer address of `fd`, "" when not tracked.
  std::string address(int fd) const;

  size_t size() const {
    return open_.size();
  }

private:
  struct entry {
    std::string address;
    clock::time_point since;
    bool refused = false;
    std::string header;     ///< a plain port's first header, as read so far
    uint32_t payload_left = 0; ///< of its first message, once the header is read
  };

  std::optional<refusal> refuse(entry& e, refusal why);

  port_limits limits_;
  std::map<int, entry> open_;
};

/// How many refusals of each kind.
using refusal_counts = std::array<uint64_t, refusal_kinds>;

/// What /metrics shows of a cluster port.
struct port_figures {
  refusal_counts refused{};
  uint64_t half_open = 0; ///< connections whose handshake is not done
};

/// One log line per kind at most every `every`: `admit` says whether this
/// refusal gets its line, and how many of its kind went unlogged since
/// the last line of that kind (they are counted in the metrics anyway).
class refusal_log_limit {
public:
  using clock = std::chrono::steady_clock;

  explicit refusal_log_limit(clock::duration every) : every_(every) {
  }

  struct verdict {
    bool log = false;
    uint64_t suppressed = 0;
  };

  verdict admit(refusal r, clock::time_point now);

private:
  clock::duration every_;
  std::array<std::optional<clock::time_point>, refusal_kinds> last_{};
  std::array<uint64_t, refusal_kinds> unlogged_{};
};

} // namespace outbox::cluster_port
