#pragma once
// The network's queue of timed entries: a radix heap. Simulated time never
// runs backwards, so every entry pushed is at or after the last one popped;
// a radix heap uses that to make a push O(1) and a pop amortized cheap, where
// a binary heap pays O(log n) cache misses per operation (measured: the heap
// was ~40% of a 1024-chip ring all-reduce). Entries of equal time come out in
// the order they were pushed.
#include <array>
#include <cstdint>
#include <vector>

#include "interconnect/time.h"

namespace interconnect {

template <class Payload>
class EventQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // at >= the time of the last entry popped.
  void push(Ps at, const Payload& p) {
    buckets_[bucket(at)].push_back({at, seq_++, p});
    ++size_;
    if (min_valid_ && at < min_) min_ = at;
  }

  // Time of the earliest entry; requires !empty().
  Ps top_time() {
    if (!min_valid_) {
      if (head0_ < buckets_[0].size()) {
        min_ = last_;
      } else {
        const auto& b = buckets_[first_nonempty()];
        min_ = b.front().at;
        for (const Item& it : b) min_ = it.at < min_ ? it.at : min_;
      }
      min_valid_ = true;
    }
    return min_;
  }

  // Removes and returns the earliest entry (first pushed among equals).
  Payload pop() {
    if (head0_ == buckets_[0].size()) refill();
    const Payload p = buckets_[0][head0_++].payload;
    --size_;
    if (head0_ == buckets_[0].size()) {
      buckets_[0].clear();
      head0_ = 0;
      min_valid_ = false;
    }
    return p;
  }

 private:
  struct Item {
    Ps at;
    std::uint64_t seq;
    Payload payload;
  };

  // Bucket 0 holds entries at last_; bucket k those whose highest bit
  // differing from last_ is bit k-1.
  std::size_t bucket(Ps at) const {
    return at == last_ ? 0 : 64 - static_cast<std::size_t>(__builtin_clzll(at ^ last_));
  }

  std::size_t first_nonempty() const {
    std::size_t i = 1;
    while (buckets_[i].empty()) ++i;
    return i;
  }

  // Moves the earliest entries to bucket 0: advance last_ to the smallest
  // time in the first non-empty bucket and spread that bucket below it.
  void refill() {
    buckets_[0].clear();
    head0_ = 0;
    const std::size_t i = first_nonempty();
    std::vector<Item> moving;
    moving.swap(buckets_[i]);
    // top_time() found the smallest time already (run_due asks it first).
    Ps low = min_;
    if (!min_valid_) {
      low = moving.front().at;
      for (const Item& it : moving) low = it.at < low ? it.at : low;
    }
    last_ = low;
    for (const Item& it : moving) buckets_[bucket(it.at)].push_back(it);
    moving.clear();
    buckets_[i].swap(moving);  // keep the capacity
    auto& b0 = buckets_[0];
    // Entries at the same time were pushed into different buckets; restore
    // push order among them (mostly it holds already: leave those in place).
    for (std::size_t k = 1; k < b0.size(); ++k) {
      if (b0[k - 1].seq < b0[k].seq) continue;
      Item it = b0[k];
      std::size_t j = k;
      for (; j > 0 && b0[j - 1].seq > it.seq; --j) b0[j] = b0[j - 1];
      b0[j] = it;
    }
  }

  std::array<std::vector<Item>, 65> buckets_;
  std::size_t head0_ = 0;
  std::size_t size_ = 0;
  std::uint64_t seq_ = 0;
  Ps last_ = 0;
  Ps min_ = 0;
  bool min_valid_ = false;
};

}  // namespace interconnect
