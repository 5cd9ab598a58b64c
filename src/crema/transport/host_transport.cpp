// The transport through host memory (gradient_transport.hpp): every local
// solver packs its diffs into its own buffer; after a barrier each sums one
// chunk of the values over all solvers, in rank order; after another (and,
// with more than one process, the first solver's sum over the processes and
// a third), each reads the whole sum, scaled, into its diffs. The sum is
// the same bits whatever the threads' timing.
#include "crema/transport/host_transport.hpp"

#include "crema/transport/processes.hpp"
#include "crema/util/math_functions.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {

template <typename Dtype>
HostTransport<Dtype>::HostTransport(int local_solvers, int total_solvers, size_t count)
    : local_solvers_(local_solvers),
      total_solvers_(total_solvers),
      count_(count),
      barrier_(local_solvers),
      buffers_(local_solvers),
      sum_(count + 1) {}

template <typename Dtype>
bool HostTransport<Dtype>::Average(int local_index, const std::vector<Blob<Dtype>*>& params,
                                   Dtype* code) {
  const size_t n = count_ + 1;
  // This solver's buffer: written only here, before the first barrier; the
  // others read it only between the first and the second.
  std::vector<Dtype>& buffer = buffers_[local_index];
  buffer.resize(n);
  ForEachPacked(params, [&](const Blob<Dtype>& blob, size_t at) {
    cpu_copy(blob.count(), blob.cpu_diff(), buffer.data() + at);
  });
  buffer[count_] = *code;
  if (!barrier_.Wait()) return false;
  // Reduce-scatter: this solver sums its chunk over all solvers, rank order.
  const std::vector<int64_t> bounds = BalancedSplit(static_cast<int64_t>(n), local_solvers_);
  for (int64_t i = bounds[local_index]; i < bounds[local_index + 1]; ++i) {
    Dtype sum = buffers_[0][i];
    for (int s = 1; s < local_solvers_; ++s) sum += buffers_[s][i];
    sum_[i] = sum;
  }
  if (!barrier_.Wait()) return false;
  if (total_solvers_ > local_solvers_) {
    if (local_index == 0) SumOverProcesses(sum_.data(), n);
    if (!barrier_.Wait()) return false;
  }
  // All-gather: every solver takes the average. sum_ is rewritten only after
  // the next first barrier, which every solver reaches after these reads.
  const Dtype scale = Dtype(1) / total_solvers_;
  ForEachPacked(params, [&](Blob<Dtype>& blob, size_t at) {
    cpu_scale(blob.count(), scale, sum_.data() + at, blob.mutable_cpu_diff());
  });
  *code = sum_[count_];
  return true;
}

template class HostTransport<float>;
template class HostTransport<double>;

template <typename Dtype>
std::unique_ptr<GradientTransport<Dtype>> MakeGradientTransport(int local_solvers,
                                                                int total_solvers, size_t count,
                                                                const std::vector<int>& devices) {
  if (devices.size() > 1) {
    std::unique_ptr<GradientTransport<Dtype>> nccl =
        MakeLocalNcclTransport<Dtype>(total_solvers, count, devices);
    if (nccl) return nccl;
  }
  return std::make_unique<HostTransport<Dtype>>(local_solvers, total_solvers, count);
}

template std::unique_ptr<GradientTransport<float>> MakeGradientTransport<float>(
    int, int, size_t, const std::vector<int>&);
template std::unique_ptr<GradientTransport<double>> MakeGradientTransport<double>(
    int, int, size_t, const std::vector<int>&);

}  // namespace crema
