// Seeds and pass orders shared by the data sources that read a list or a
// database in passes (ImageData, DenseImageData, the DataReader behind Data
// and AnnotatedData).
#ifndef CREMA_UTIL_PASS_ORDER_HPP_
#define CREMA_UTIL_PASS_ORDER_HPP_

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "crema/common.hpp"

namespace crema {

// 2^64 / golden ratio: seed + index * kSeedSpread gives consecutive items,
// batches or passes seeds spread over the seed space.
constexpr uint64_t kSeedSpread = 0x9E3779B97F4A7C15ULL;

// 64 bits from the calling thread's generator: the seed a source draws at
// set-up for its pass orders or the random transformations of its batches.
inline uint64_t DrawSeed() {
  const uint64_t high = Context::rng()();
  return (high << 32) | Context::rng()();
}

// The order in which a shuffling source reads its `count` items in pass
// `pass`: a permutation of 0..count-1 drawn from the source's seed and the
// pass number alone (Fisher-Yates), so a resumed run needs only the pass to
// read on in the same order, and every pass has an order of its own.
template <typename Index>
std::vector<Index> PassOrder(size_t count, uint64_t seed, uint64_t pass) {
  std::vector<Index> order(count);
  std::iota(order.begin(), order.end(), Index(0));
  RNG rng(seed ^ ((pass + 1) * kSeedSpread));
  for (size_t i = count; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

// Walks the items 0..count-1 pass after pass: in order, or with shuffle in
// each pass's PassOrder. `start` counts the items already walked (passes
// included), so a walk can begin anywhere (rand_skip, a resumed position).
class PassWalk {
 public:
  PassWalk() = default;
  PassWalk(size_t count, bool shuffle, uint64_t seed, uint64_t start = 0)
      : count_(count), shuffle_(shuffle), seed_(seed) {
    CHECK_GT(count_, 0u) << "a walk over no items";  // sources refuse empty lists first
    pass_ = start / count_;
    index_ = start % count_;
    Reorder();
  }
  // The item the walk stands at.
  size_t current() const { return shuffle_ ? order_[index_] : index_; }
  uint64_t pass() const { return pass_; }
  // To the next item; after a pass's last, the next pass's first.
  void Advance() {
    if (++index_ < count_) return;
    index_ = 0;
    ++pass_;
    Reorder();
  }

 private:
  void Reorder() {
    if (shuffle_) order_ = PassOrder<size_t>(count_, seed_, pass_);
  }

  size_t count_ = 0;
  bool shuffle_ = false;
  uint64_t seed_ = 0;
  uint64_t pass_ = 0;
  size_t index_ = 0;
  std::vector<size_t> order_;  // shuffle: the current pass's order
};

}  // namespace crema

#endif  // CREMA_UTIL_PASS_ORDER_HPP_
