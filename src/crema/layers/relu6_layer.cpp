#include "crema/layers/relu6_layer.hpp"

#include <algorithm>

#include "crema/util/thread_pool.hpp"

namespace crema {

namespace {

// Elementwise passes split over the thread pool in parts of at least this
// many values (smaller parts cost more to hand out than they save).
constexpr int64_t kReLU6Grain = 16 << 10;

}  // namespace

template <typename Dtype>
void ReLU6Layer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  ThreadPool::Global().ParallelFor(count, kReLU6Grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      top_data[i] = std::min(std::max(bottom_data[i], Dtype(0)), Dtype(6));
    }
  });
}

template <typename Dtype>
void ReLU6Layer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob<Dtype>*>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  ThreadPool::Global().ParallelFor(count, kReLU6Grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const bool inside = top_data[i] > Dtype(0) && top_data[i] < Dtype(6);
      bottom_diff[i] = inside ? top_diff[i] : Dtype(0);
    }
  });
}

#ifndef CREMA_CUDA
STUB_GPU(ReLU6Layer);
#endif

INSTANTIATE_CLASS(ReLU6Layer);
REGISTER_LAYER_CLASS(ReLU6);

}  // namespace crema
