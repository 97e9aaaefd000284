// ReplayBuffer<Item>: experience replay over any item type: a ring of slots (FIFO eviction) and a
// sampler (ReplayOptions::sampler), as reverb's tables have.
//
//   insert(item, p) --> slot (index mod capacity, FIFO) --> SumTree leaf weight p^alpha
//   sample(k), prioritized (Schaul et al. 2016; the default):
//                   k independent draws with P(i) = p_i^alpha / sum_j p_j^alpha, O(log N) each,
//                   weights w_i = (N P(i))^-beta / max over the batch (as seed_rl normalises)
//   sample(k), uniform: k independent draws among the live items, O(1) each, weights 1
//   sample(k), fifo:    the k oldest items not sampled yet, each once, weights 1
//   update_priorities(indices, p) --> only where the slot still holds that index
//
// ReplayTable (replay/replay_table.hpp) adds a rate limiter and the waiting around it.
//
// An index is the item's insertion number, unique for the buffer's whole life (it continues
// across save/load): an update for an item that was evicted since it was sampled finds another
// index in the slot and is ignored, never applied to the newer item.
//
// Thread-safety: every public member may be called concurrently from any number of threads
// (one mutex guards the tree and the slots; items are handed out as shared_ptr<const Item>, so
// a sampled item stays valid after it is evicted). Item allocation and serialisation happen
// outside the lock.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/thread_annotations.hpp"
#include "seedrl/replay/item_codec.hpp"
#include "seedrl/replay/sum_tree.hpp"

namespace seedrl {

/// How a replay chooses the items it hands out.
enum class SamplerKind : std::uint8_t {
  prioritized,  ///< proportional to priority^alpha, with importance weights
  uniform,      ///< uniformly among the live items (priorities are kept, not used)
  fifo,         ///< oldest first, each item once (a queue that keeps what it handed out)
};

inline const char* name(SamplerKind kind) {
  switch (kind) {
    case SamplerKind::prioritized:
      return "prioritized";
    case SamplerKind::uniform:
      return "uniform";
    case SamplerKind::fifo:
      return "fifo";
  }
  return "unknown";
}

struct ReplayOptions {
  double priority_exponent = 0.9;             ///< alpha (prioritized); 0 samples uniformly
  double importance_sampling_exponent = 0.6;  ///< beta (prioritized)
  SamplerKind sampler = SamplerKind::prioritized;

  void validate(std::string_view owner = "ReplayOptions") const {
    SEEDRL_REQUIRE(priority_exponent >= 0.0 && std::isfinite(priority_exponent), owner,
                   ".priority_exponent must be finite and >= 0, got ", priority_exponent);
    SEEDRL_REQUIRE(
        importance_sampling_exponent >= 0.0 && std::isfinite(importance_sampling_exponent), owner,
        ".importance_sampling_exponent must be finite and >= 0, got ",
        importance_sampling_exponent);
  }
};

template <class Item>
class ReplayBuffer {
 public:
  struct Sample {
    std::vector<std::uint64_t> indices;  ///< insertion numbers, for update_priorities
    std::vector<float> weights;          ///< importance weights, max 1
    std::vector<double> probabilities;   ///< P(i) at sampling time
    std::vector<std::shared_ptr<const Item>> items;
  };

  ReplayBuffer(std::size_t capacity, const ReplayOptions& options = {}, std::uint64_t seed = 0)
      : options_(options), capacity_(capacity), tree_(capacity), slots_(capacity), rng_(seed) {
    options.validate();
  }
  ReplayBuffer(const ReplayBuffer&) = delete;
  ReplayBuffer& operator=(const ReplayBuffer&) = delete;

  std::size_t capacity() const { return capacity_; }
  const ReplayOptions& options() const { return options_; }
  std::size_t size() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return size_;
  }
  /// Items inserted over the buffer's life (the next index).
  std::uint64_t inserted() const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return next_index_;
  }

  /// Adds an item with a priority (finite, > 0), evicting the oldest item when full. Returns
  /// the item's index.
  std::uint64_t insert(Item item, double priority) SEEDRL_EXCLUDES(mutex_) {
    check_priority(priority, "insert");
    auto stored = std::make_shared<const Item>(std::move(item));
    std::shared_ptr<const Item> evicted;  // destroyed after the lock is released
    MutexLock lock(mutex_);
    const std::uint64_t index = next_index_++;
    const std::size_t slot = static_cast<std::size_t>(index % capacity_);
    Slot& s = slots_[slot];
    if (s.item == nullptr) ++size_;
    evicted = std::move(s.item);
    s = Slot{index, priority, std::move(stored)};
    tree_.set(slot, weight(priority));
    return index;
  }

  /// Whether sample(n) can hand out `n` items now: any live item (prioritized, uniform), or `n`
  /// not sampled yet (fifo).
  bool can_sample(std::size_t n) const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return sampleable(n);
  }

  /// Draws `batch_size` items as the sampler says (see the top). Throws if can_sample() is false.
  Sample sample(std::size_t batch_size) SEEDRL_EXCLUDES(mutex_) {
    SEEDRL_REQUIRE(batch_size > 0, "ReplayBuffer::sample: batch_size must be positive");
    if (options_.sampler != SamplerKind::prioritized) return sample_unweighted(batch_size);
    Sample out;
    out.indices.reserve(batch_size);
    out.weights.reserve(batch_size);
    out.probabilities.reserve(batch_size);
    out.items.reserve(batch_size);
    double max_weight = 0.0;
    {
      MutexLock lock(mutex_);
      SEEDRL_REQUIRE(size_ > 0, "ReplayBuffer::sample: the buffer is empty");
      const double total = tree_.total();
      const auto n = static_cast<double>(size_);
      for (std::size_t k = 0; k < batch_size; ++k) {
        const std::size_t slot = tree_.find(rng_.uniform() * total);
        const Slot& s = slots_[slot];
        const double probability = tree_.get(slot) / total;
        const double w = std::pow(n * probability, -options_.importance_sampling_exponent);
        max_weight = std::max(max_weight, w);
        out.indices.push_back(s.index);
        out.probabilities.push_back(probability);
        out.weights.push_back(static_cast<float>(w));
        out.items.push_back(s.item);
      }
    }
    for (float& w : out.weights) w = static_cast<float>(w / max_weight);
    return out;
  }

  /// Sets new priorities (finite, > 0) for sampled indices. Indices whose item has been evicted
  /// since are skipped. Returns how many priorities were applied. Invalid input is rejected as a
  /// whole before anything changes.
  std::size_t update_priorities(std::span<const std::uint64_t> indices,
                                std::span<const double> priorities) SEEDRL_EXCLUDES(mutex_) {
    SEEDRL_REQUIRE(indices.size() == priorities.size(),
                   "ReplayBuffer::update_priorities: ", indices.size(), " indices but ",
                   priorities.size(), " priorities");
    for (double p : priorities) check_priority(p, "update_priorities");
    std::size_t applied = 0;
    MutexLock lock(mutex_);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const std::size_t slot = static_cast<std::size_t>(indices[k] % capacity_);
      Slot& s = slots_[slot];
      if (s.item == nullptr || s.index != indices[k]) continue;  // evicted since it was sampled
      s.priority = priorities[k];
      tree_.set(slot, weight(priorities[k]));
      ++applied;
    }
    return applied;
  }

  /// Priority of a live item, or a negative value when the index is not in the buffer.
  double priority(std::uint64_t index) const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    const Slot& s = slots_[static_cast<std::size_t>(index % capacity_)];
    return s.item != nullptr && s.index == index ? s.priority : -1.0;
  }

  /// Whether `pred(item)` holds for every item in the buffer (e.g. to check a loaded state).
  template <class Pred>
  bool all_items(Pred pred) const SEEDRL_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    for (const Slot& s : slots_)
      if (s.item != nullptr && !pred(*s.item)) return false;
    return true;
  }

  // ---- Saving and restoring ----
  //
  // The state: capacity, the sampler, the next index, the fifo sampler's next index, the
  // generator, and (when include_items) every live item with its index and priority, oldest
  // first; CRC-32C protected. Version 1 files (before samplers) read as prioritized. Restoring
  // without items leaves the buffer empty but keeps the index counter and the generator, so indices
  // stay unique and sampling continues the same random stream. The exponents are this buffer's
  // options, not the file's.

  /// The serialised state (see above).
  std::string save(bool include_items) const requires ReplaySerializable<Item> {
    std::vector<Slot> live;
    std::uint64_t next_index = 0, fifo_next = 0;
    Rng::State rng_state;
    {
      MutexLock lock(mutex_);
      next_index = next_index_;
      fifo_next = fifo_next_;
      rng_state = rng_.state();
      if (include_items) {
        live.reserve(size_);
        for (const Slot& s : slots_)
          if (s.item != nullptr) live.push_back(s);
      }
    }
    std::sort(live.begin(), live.end(),
              [](const Slot& a, const Slot& b) { return a.index < b.index; });
    ByteWriter w;
    w.bytes(kMagic.data(), kMagic.size());
    w.put<std::uint32_t>(kVersion);
    w.put<std::uint32_t>(include_items ? 1u : 0u);
    w.put<std::uint64_t>(capacity_);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(options_.sampler));
    w.put<double>(options_.priority_exponent);
    w.put<double>(options_.importance_sampling_exponent);
    w.put<std::uint64_t>(next_index);
    w.put<std::uint64_t>(fifo_next);
    for (std::uint64_t word : rng_state.words) w.put<std::uint64_t>(word);
    w.put<double>(rng_state.spare);
    w.put<std::uint8_t>(rng_state.has_spare ? 1 : 0);
    w.put<std::uint64_t>(live.size());
    for (const Slot& s : live) {
      w.put<std::uint64_t>(s.index);
      w.put<double>(s.priority);
      ReplayItemCodec<Item>::write(w, *s.item);
    }
    w.put<std::uint32_t>(crc32c(w.data().data(), w.data().size()));
    return std::move(w.data());
  }

  /// Restores a state produced by save(). `source` names the data in error messages. On any
  /// error (truncation, corruption, another capacity) the buffer is left unchanged.
  void load(std::string_view data, const std::string& source) requires ReplaySerializable<Item> {
    SEEDRL_REQUIRE(data.size() >= kMagic.size() + 4 && data.substr(0, kMagic.size()) == kMagic,
                   source, ": not a seedrl replay state (bad magic)");
    ByteReader crc_reader(std::span<const char>(data.data() + data.size() - 4, 4), source);
    const auto stored_crc = crc_reader.get<std::uint32_t>();
    SEEDRL_REQUIRE(crc32c(data.data(), data.size() - 4) == stored_crc, source,
                   ": checksum mismatch (the replay state is corrupt or truncated)");
    ByteReader r(std::span<const char>(data.data(), data.size() - 4), source);
    char magic[8];
    r.bytes(magic, sizeof magic);
    const auto version = r.get<std::uint32_t>();
    SEEDRL_REQUIRE(version == 1 || version == kVersion, source, ": replay state version ", version,
                   ", this build reads 1 and ", kVersion);
    const bool has_items = (r.get<std::uint32_t>() & 1u) != 0;
    const auto capacity = r.get<std::uint64_t>();
    SEEDRL_REQUIRE(capacity == capacity_, source, ": holds a replay buffer of capacity ", capacity,
                   ", this buffer has capacity ", capacity_);
    if (version >= 2) {
      const auto sampler = r.get<std::uint8_t>();
      SEEDRL_REQUIRE(sampler == static_cast<std::uint8_t>(options_.sampler), source,
                     ": holds a replay with another sampler (", int(sampler), ") than this one's ",
                     name(options_.sampler));
    }
    r.get<double>();  // the saving buffer's exponents: informational
    r.get<double>();
    const auto next_index = r.get<std::uint64_t>();
    const std::uint64_t fifo_next = version >= 2 ? r.get<std::uint64_t>() : 0;
    Rng::State rng_state;
    for (std::uint64_t& word : rng_state.words) word = r.get<std::uint64_t>();
    rng_state.spare = r.get<double>();
    rng_state.has_spare = r.get<std::uint8_t>() != 0;
    const auto count = r.get<std::uint64_t>();
    SEEDRL_REQUIRE(count <= capacity && (has_items || count == 0), source, ": ", count,
                   " items for a buffer of capacity ", capacity);
    std::vector<Slot> slots(capacity_);
    SumTree tree(capacity_);
    for (std::uint64_t k = 0; k < count; ++k) {
      Slot s;
      s.index = r.get<std::uint64_t>();
      s.priority = r.get<double>();
      SEEDRL_REQUIRE(s.index < next_index, source, ": item index ", s.index,
                     " is not below the next index ", next_index);
      SEEDRL_REQUIRE(s.priority > 0.0 && std::isfinite(s.priority), source, ": item ", s.index,
                     " has invalid priority ", s.priority);
      const auto slot = static_cast<std::size_t>(s.index % capacity);
      SEEDRL_REQUIRE(slots[slot].item == nullptr, source, ": two items for slot ", slot);
      s.item = std::make_shared<const Item>(ReplayItemCodec<Item>::read(r));
      tree.set(slot, weight(s.priority));
      slots[slot] = std::move(s);
    }
    SEEDRL_REQUIRE(r.remaining() == 0, source, ": ", r.remaining(),
                   " unexpected bytes after the last item");

    std::vector<Slot> old;  // released after the lock
    MutexLock lock(mutex_);
    old.swap(slots_);
    slots_ = std::move(slots);
    tree_ = std::move(tree);
    size_ = static_cast<std::size_t>(count);
    next_index_ = next_index;
    fifo_next_ = fifo_next;
    rng_.set_state(rng_state);
  }

  /// save() into a file, atomically (a crash never leaves a torn file).
  void save_file(const std::string& path,
                 bool include_items) const requires ReplaySerializable<Item> {
    write_file_atomically(path, save(include_items));
  }
  void load_file(const std::string& path) requires ReplaySerializable<Item> {
    load(read_file(path), path);
  }

 private:
  static constexpr std::string_view kMagic = "SEEDRLRB";
  static constexpr std::uint32_t kVersion = 2;

  struct Slot {
    std::uint64_t index = 0;
    double priority = 0.0;
    std::shared_ptr<const Item> item;
  };

  // The live items are the last size_ indices (FIFO eviction).
  std::uint64_t oldest_index() const SEEDRL_REQUIRES(mutex_) { return next_index_ - size_; }
  bool sampleable(std::size_t n) const SEEDRL_REQUIRES(mutex_) {
    if (options_.sampler != SamplerKind::fifo) return size_ > 0;
    return next_index_ - std::max(fifo_next_, oldest_index()) >= n;
  }

  // Uniform and FIFO draws: weights 1.
  Sample sample_unweighted(std::size_t batch_size) SEEDRL_EXCLUDES(mutex_) {
    Sample out;
    out.weights.assign(batch_size, 1.0f);
    MutexLock lock(mutex_);
    SEEDRL_REQUIRE(sampleable(batch_size), "ReplayBuffer::sample: ", batch_size,
                   " items asked of a ", name(options_.sampler), " replay that has ",
                   options_.sampler == SamplerKind::fifo
                       ? next_index_ - std::max(fifo_next_, oldest_index())
                       : std::uint64_t{size_},
                   " to give");
    const std::uint64_t oldest = oldest_index();
    if (options_.sampler == SamplerKind::fifo) fifo_next_ = std::max(fifo_next_, oldest);
    for (std::size_t k = 0; k < batch_size; ++k) {
      std::uint64_t index;
      if (options_.sampler == SamplerKind::fifo) {
        index = fifo_next_++;
        out.probabilities.push_back(1.0);
      } else {
        const auto offset = std::min<std::uint64_t>(
            static_cast<std::uint64_t>(rng_.uniform() * static_cast<double>(size_)), size_ - 1);
        index = oldest + offset;
        out.probabilities.push_back(1.0 / static_cast<double>(size_));
      }
      const Slot& s = slots_[static_cast<std::size_t>(index % capacity_)];
      out.indices.push_back(s.index);
      out.items.push_back(s.item);
    }
    return out;
  }

  static void check_priority(double priority, const char* what) {
    SEEDRL_REQUIRE(priority > 0.0 && std::isfinite(priority), "ReplayBuffer::", what,
                   ": priority must be finite and > 0, got ", priority);
  }
  double weight(double priority) const {
    return options_.priority_exponent == 0.0 ? 1.0 : std::pow(priority, options_.priority_exponent);
  }

  ReplayOptions options_;
  // Read without the lock: slots_ itself is replaced by load(), under the lock.
  const std::size_t capacity_;
  mutable Mutex mutex_;
  SumTree tree_ SEEDRL_GUARDED_BY(mutex_);
  std::vector<Slot> slots_ SEEDRL_GUARDED_BY(mutex_);
  std::size_t size_ SEEDRL_GUARDED_BY(mutex_) = 0;
  std::uint64_t next_index_ SEEDRL_GUARDED_BY(mutex_) = 0;
  std::uint64_t fifo_next_ SEEDRL_GUARDED_BY(mutex_) =
      0;  // the next index a fifo sampler hands out
  Rng rng_ SEEDRL_GUARDED_BY(mutex_);
};

}  // namespace seedrl
