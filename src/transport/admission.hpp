// What a listener admits before it does any work on a connection (every listener: plain TCP, TLS
// and Unix sockets), so that a flood of connections cannot take the learner's cores, file
// descriptors or log from the actors already stepping (a TLS handshake alone costs the server a
// key exchange and a signature, about a millisecond of a core):
//
//   accept ──▶ address over its rate? ──▶ refused: closed at once
//          ──▶ max_pending connections without a WELCOME yet? ──▶ refused likewise
//          ──▶ admitted: a Slot held until the handshake ends (WELCOME sent, refused, timed out,
//              closed); the connection counts against max_connections only from its WELCOME
//
// The rate is a token bucket per peer address (a TCP peer's IP, a Unix peer's user id): `burst`
// connections at once, then `per_second`. Addresses idle for a minute are forgotten (at most every
// few seconds, when the table is large). RefusalLog says at most a few lines a second and sums up
// the rest (in the next second, or at the listener's next sweep), so that a flood cannot fill the
// learner's log either; escape_peer_text keeps a peer's bytes from writing lines of their own.
//
// Thread-safety: all members may be called from any thread (the listener's I/O threads).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_annotations.hpp"

namespace seedrl::transport_detail {

class AdmissionLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict { admit, too_many_pending, address_over_rate };

  /// `max_pending` <= 0 or `per_second` <= 0: that rule is off.
  AdmissionLimiter(int max_pending, double per_second, int burst)
      : max_pending_(max_pending), per_second_(per_second), burst_(std::max(burst, 1)) {}

  /// A connection without its WELCOME yet, counted until released (or destroyed).
  class Slot {
   public:
    Slot() = default;
    explicit Slot(AdmissionLimiter* owner) : owner_(owner) {}
    Slot(Slot&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)) {}
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        release();
        owner_ = std::exchange(other.owner_, nullptr);
      }
      return *this;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { release(); }
    void release() {
      if (owner_ != nullptr) --owner_->pending_;
      owner_ = nullptr;
    }

   private:
    AdmissionLimiter* owner_ = nullptr;
  };

  /// Whether a connection from `address` may start its handshake now; on admit, `slot` holds it.
  Verdict admit(const std::string& address, Clock::time_point now, Slot& slot)
      SEEDRL_EXCLUDES(mutex_) {
    if (per_second_ > 0.0) {
      MutexLock lock(mutex_);
      forget_idle(now);
      auto [it, fresh] = buckets_.try_emplace(address, Bucket{static_cast<double>(burst_), now});
      Bucket& b = it->second;
      if (!fresh) {
        const double elapsed = std::chrono::duration<double>(now - b.last).count();
        b.tokens = std::min<double>(burst_, b.tokens + elapsed * per_second_);
        b.last = now;
      }
      if (b.tokens < 1.0) return Verdict::address_over_rate;
      b.tokens -= 1.0;
    }
    if (max_pending_ > 0) {
      int pending = pending_.load();
      do {
        if (pending >= max_pending_) return Verdict::too_many_pending;
      } while (!pending_.compare_exchange_weak(pending, pending + 1));
    } else {
      ++pending_;
    }
    slot = Slot(this);
    return Verdict::admit;
  }

  int pending() const { return pending_.load(); }
  std::size_t addresses() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return buckets_.size();
  }

 private:
  struct Bucket {
    double tokens;
    Clock::time_point last;
  };

  void forget_idle(Clock::time_point now) SEEDRL_REQUIRES(mutex_) {
    if (buckets_.size() < 1024 || now - last_sweep_ < std::chrono::seconds(5)) return;
    last_sweep_ = now;
    std::erase_if(buckets_, [&](const auto& entry) {
      return now - entry.second.last > std::chrono::seconds(60);
    });
  }

  const int max_pending_;
  const double per_second_;
  const int burst_;
  std::atomic<int> pending_{0};
  mutable Mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_ SEEDRL_GUARDED_BY(mutex_);
  Clock::time_point last_sweep_ SEEDRL_GUARDED_BY(mutex_){};
};

/// `text` with every byte that is not printable ASCII (a control character, a line end, an escape
/// sequence, anything >= 0x7f) and every backslash written as \xNN: a line of the learner's log
/// that quotes a peer says what the peer sent and nothing else.
inline std::string escape_peer_text(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

/// Says at most `per_second` lines a second through `sink`; the lines over that are counted and
/// summed up in one line when the next second's first line comes (or by tick()).
class RefusalLog {
 public:
  using Clock = std::chrono::steady_clock;
  RefusalLog(int per_second, std::function<void(const std::string&)> sink)
      : per_second_(std::max(per_second, 1)), sink_(std::move(sink)) {}

  void operator()(const std::string& line, Clock::time_point now) SEEDRL_EXCLUDES(mutex_) {
    std::string summary;
    bool say = false;
    {
      MutexLock lock(mutex_);
      if (now - window_ >= std::chrono::seconds(1)) {
        summary = summary_line();
        window_ = now;
        said_ = 0;
      }
      if (said_ < per_second_) {
        ++said_;
        say = true;
      } else {
        ++suppressed_;
        last_suppressed_ = line;
      }
    }
    if (!sink_) return;
    if (!summary.empty()) sink_(summary);
    if (say) sink_(line);
  }

  /// Once the second of the last lines is over: the summary of the lines not said, if any.
  void tick(Clock::time_point now) SEEDRL_EXCLUDES(mutex_) {
    std::string summary;
    {
      MutexLock lock(mutex_);
      if (now - window_ < std::chrono::seconds(1)) return;
      summary = summary_line();
    }
    if (sink_ && !summary.empty()) sink_(summary);
  }

 private:
  std::string summary_line() SEEDRL_REQUIRES(mutex_) {
    if (suppressed_ == 0) return {};
    std::string line =
        str_cat(suppressed_, " more connection", suppressed_ == 1 ? " was" : "s were",
                " refused in a second (the last: ", last_suppressed_, ")");
    suppressed_ = 0;
    return line;
  }

  const int per_second_;
  const std::function<void(const std::string&)> sink_;
  Mutex mutex_;
  Clock::time_point window_ SEEDRL_GUARDED_BY(mutex_){};
  int said_ SEEDRL_GUARDED_BY(mutex_) = 0;
  std::int64_t suppressed_ SEEDRL_GUARDED_BY(mutex_) = 0;
  std::string last_suppressed_ SEEDRL_GUARDED_BY(mutex_);
};

}  // namespace seedrl::transport_detail
