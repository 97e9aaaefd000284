// ReplayTable<Item>: a replay buffer with its sampler (replay/replay_buffer.hpp) and the rate
// limiter that holds sampling to insertion (replay/rate_limiter.hpp), doing its own waiting, as
// reverb's tables do. Any learner is fed from one in a few lines (with a TableFeeder thread,
// replay/table_feeder.hpp, or by inserting itself):
//
//   feeder thread:  while (table.wait_to_insert()) { take items; give priorities; table.insert }
//   learner:        if (!table.wait_to_sample(B)) return std::nullopt;   // closed, nothing due
//                   auto sample = table.sample(B); train; table.update_priorities(...)
//
// close() ends the waiting on both sides: wait_to_insert() returns false, wait_to_sample(n)
// returns whether n items may still be drawn. Its counters go to metrics (metrics()) and its
// state to checkpoints (save()/load(): the buffer and the limiter's counters, CRC-protected).
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/replay/rate_limiter.hpp"
#include "seedrl/replay/replay_buffer.hpp"

namespace seedrl {

struct ReplayTableOptions {
  std::size_t capacity = 100'000;  ///< items; the oldest is evicted beyond it
  ReplayOptions replay;            ///< the sampler (prioritized by default) and its exponents
  RateLimiterOptions limiter;
  std::uint64_t seed = 0;  ///< the sampler's draws

  /// Throws seedrl::Error naming `owner`.field.
  void validate(std::string_view owner) const {
    SEEDRL_REQUIRE(capacity >= 1, owner, ".capacity must be >= 1, got ", capacity);
    replay.validate(str_cat(owner, ".replay"));
    limiter.validate(str_cat(owner, ".limiter"));
    SEEDRL_REQUIRE(limiter.min_size_to_sample <= capacity, owner, ".limiter.min_size_to_sample (",
                   limiter.min_size_to_sample, ") must not exceed the capacity (", capacity, ")");
  }
};

template <class Item>
class ReplayTable {
 public:
  using Sample = typename ReplayBuffer<Item>::Sample;

  explicit ReplayTable(const ReplayTableOptions& options)
      : options_((options.validate("ReplayTableOptions"), options)),
        buffer_(options.capacity, options.replay, options.seed),
        limiter_(options.limiter) {}
  ReplayTable(const ReplayTable&) = delete;
  ReplayTable& operator=(const ReplayTable&) = delete;

  const ReplayTableOptions& options() const { return options_; }
  std::size_t capacity() const { return buffer_.capacity(); }
  std::size_t size() const { return buffer_.size(); }
  /// Items inserted and sampled through this table (restored with its state).
  std::int64_t inserted() const { return limiter_.inserts(); }
  std::int64_t sampled() const { return limiter_.samples(); }

  /// Adds an item (priority finite, > 0), evicting the oldest when full; never waits. Returns its
  /// index (ReplayBuffer::insert).
  std::uint64_t insert(Item item, double priority) SEEDRL_EXCLUDES(mutex_) {
    const std::uint64_t index = buffer_.insert(std::move(item), priority);
    MutexLock lock(mutex_);
    limiter_.inserted(1);
    changed_.notify_all();
    return index;
  }

  /// Whether `n` items may be drawn now; whether the limiter lets an item in now.
  bool can_sample(std::int64_t n) const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return sampleable(n);
  }
  bool can_insert() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return limiter_.can_insert(buffer_.size());
  }

  /// Waits until the limiter lets items in, or the table is closed; false once closed.
  bool wait_to_insert() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    while (!closed_ && !limiter_.can_insert(buffer_.size())) changed_.wait(lock);
    return !closed_;
  }

  /// Waits until `n` items may be drawn, or the table is closed; whether they may.
  bool wait_to_sample(std::int64_t n) SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    while (!closed_ && !sampleable(n)) changed_.wait(lock);
    return sampleable(n);
  }

  /// Draws `n` items (the buffer's sampler) and counts them; never waits. Throws when the buffer
  /// has nothing to give (call it once can_sample or wait_to_sample said yes).
  Sample sample(std::int64_t n) SEEDRL_EXCLUDES(mutex_) {
    Sample drawn = buffer_.sample(static_cast<std::size_t>(n));
    MutexLock lock(mutex_);
    limiter_.sampled(n);
    changed_.notify_all();  // an inserter may be waiting for the samples to move
    return drawn;
  }

  /// Draws `n` items like sample() without counting them: updates a learner makes beyond the
  /// limiter's ratio (SAC's catch-up after a reset). Never waits; throws when the buffer has
  /// nothing to give.
  Sample draw(std::int64_t n) { return buffer_.sample(static_cast<std::size_t>(n)); }

  std::size_t update_priorities(std::span<const std::uint64_t> indices,
                                std::span<const double> priorities) {
    return buffer_.update_priorities(indices, priorities);
  }
  double priority(std::uint64_t index) const { return buffer_.priority(index); }
  template <class Pred>
  bool all_items(Pred pred) const {
    return buffer_.all_items(pred);
  }

  /// Ends every wait (see the top). Items may still be inserted and sampled without waiting.
  void close() SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  bool closed() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return closed_;
  }

  /// The table's figures for a run's reports: `prefix`_size, _inserted, _sampled.
  struct Counters {
    std::int64_t size = 0, inserted = 0, sampled = 0;
  };
  Counters counters() const { return {static_cast<std::int64_t>(size()), inserted(), sampled()}; }

  // ---- Saving and restoring: the limiter's counters, then the buffer's state
  // (ReplayBuffer::save), CRC-32C protected. A buffer's state alone (what seedrl saved before
  // tables) loads with the counters at zero.

  std::string save(bool include_items) const requires ReplaySerializable<Item> {
    ByteWriter w;
    w.bytes(kMagic.data(), kMagic.size());
    w.put<std::uint32_t>(kVersion);
    w.put<std::int64_t>(limiter_.inserts());
    w.put<std::int64_t>(limiter_.samples());
    w.blob(buffer_.save(include_items));
    w.put<std::uint32_t>(crc32c(w.data().data(), w.data().size()));
    return std::move(w.data());
  }

  /// Restores what save() wrote; on any error (the message names `source`) nothing changes.
  void load(std::string_view data, const std::string& source) requires ReplaySerializable<Item> {
    if (!data.starts_with(kMagic)) {  // a replay buffer's state alone
      buffer_.load(data, source);
      MutexLock lock(mutex_);
      limiter_.restore(0, 0);
      changed_.notify_all();
      return;
    }
    SEEDRL_REQUIRE(data.size() >= kMagic.size() + 4, source, ": truncated replay table state");
    ByteReader crc_reader(std::span<const char>(data.data() + data.size() - 4, 4), source);
    SEEDRL_REQUIRE(crc32c(data.data(), data.size() - 4) == crc_reader.get<std::uint32_t>(), source,
                   ": checksum mismatch (the replay table state is corrupt or truncated)");
    ByteReader r(std::span<const char>(data.data(), data.size() - 4), source);
    char magic[8];
    r.bytes(magic, sizeof magic);
    const auto version = r.get<std::uint32_t>();
    SEEDRL_REQUIRE(version == kVersion, source, ": replay table state version ", version,
                   ", this build reads ", kVersion);
    const auto inserts = r.get<std::int64_t>(), samples = r.get<std::int64_t>();
    SEEDRL_REQUIRE(inserts >= 0 && samples >= 0, source, ": negative replay counters");
    const std::string_view buffer = r.blob();
    SEEDRL_REQUIRE(r.remaining() == 0, source, ": ", r.remaining(), " unexpected bytes");
    buffer_.load(buffer, source);
    MutexLock lock(mutex_);
    limiter_.restore(inserts, samples);
    changed_.notify_all();
  }
  void save_file(const std::string& path,
                 bool include_items) const requires ReplaySerializable<Item> {
    write_file_atomically(path, save(include_items));
  }
  void load_file(const std::string& path) requires ReplaySerializable<Item> {
    load(read_file(path), path);
  }

 private:
  static constexpr std::string_view kMagic = "SEEDRLRT";
  static constexpr std::uint32_t kVersion = 1;

  bool sampleable(std::int64_t n) const SEEDRL_REQUIRES(mutex_) {
    return limiter_.can_sample(buffer_.size(), n) &&
           buffer_.can_sample(static_cast<std::size_t>(n));
  }

  const ReplayTableOptions options_;
  ReplayBuffer<Item> buffer_;  // thread-safe itself
  mutable Mutex mutex_;        // the limiter's updates and the waits
  CondVar changed_;
  RateLimiter limiter_;  // counters read without the lock; updated under it
  bool closed_ SEEDRL_GUARDED_BY(mutex_) = false;
};

/// Restores `table` from `state` (ReplayTable::save's bytes, a learner's checkpoint_replay; from
/// the replay of the checkpoint at `source`). Every item must satisfy `fits` (the learner's
/// layout), else nothing changes and the error names `source` and `items` ("sequences",
/// "windows").
template <class Item, class Fits>
void load_replay_state(ReplayTable<Item>& table, std::string_view state, const std::string& source,
                       Fits fits, std::string_view items) {
  ReplayTable<Item> loaded(table.options());
  loaded.load(state, source);
  SEEDRL_REQUIRE(loaded.all_items(fits), source, ": its replay holds ", items,
                 " of another layout than this learner's");
  table.load(state, source);
}

}  // namespace seedrl
