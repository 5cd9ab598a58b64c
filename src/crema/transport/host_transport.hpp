// The transport through host memory, every build's (host_transport.cpp).
#ifndef CREMA_TRANSPORT_HOST_TRANSPORT_HPP_
#define CREMA_TRANSPORT_HOST_TRANSPORT_HPP_

#include <vector>

#include "crema/parallel.hpp"
#include "crema/transport/gradient_transport.hpp"

namespace crema {

template <typename Dtype>
class HostTransport : public GradientTransport<Dtype> {
 public:
  // total_solvers: across all processes (local_solvers * processes).
  HostTransport(int local_solvers, int total_solvers, size_t count);
  bool Average(int local_index, const std::vector<Blob<Dtype>*>& params, Dtype* code) override;
  void Abort() override { barrier_.Abort(); }

 private:
  const int local_solvers_;
  const int total_solvers_;
  const size_t count_;
  AbortableBarrier barrier_;
  std::vector<std::vector<Dtype>> buffers_;  // each local solver's: its diffs, then the code
  std::vector<Dtype> sum_;
};

}  // namespace crema

#endif  // CREMA_TRANSPORT_HOST_TRANSPORT_HPP_
