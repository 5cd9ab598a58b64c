// The body the cuDNN ReLU, Sigmoid and TanH layers share: one cuDNN
// activation over a whole blob (its values in a row: the function is
// element-wise), forward and backward, in place or not.
#ifndef CREMA_CUDNN_CUDNN_ACTIVATION_HPP_
#define CREMA_CUDNN_CUDNN_ACTIVATION_HPP_

#include "crema/cudnn/cudnn.hpp"

namespace crema {

template <typename Dtype>
class CudnnActivationBody {
 public:
  // NaN inputs give NaN outputs, as in the reference bodies.
  explicit CudnnActivationBody(cudnnActivationMode_t mode) {
    CUDNN_CHECK(cudnnSetActivationDescriptor(activation_.get(), mode, CUDNN_PROPAGATE_NAN, 0.0));
  }
  // Shapes the body for `count` values; false where cuDNN cannot hold them.
  bool Reshape(size_t count) {
    ready_ = FitsCudnn(count);
    if (ready_) values_.Set(CudnnType<Dtype>::type, 1, 1, 1, static_cast<int>(count));
    return ready_;
  }
  bool ready() const { return ready_; }
  void Forward(const Dtype* x, Dtype* y) const {
    CUDNN_CHECK(cudnnActivationForward(CudnnHandle(), activation_.get(), CudnnType<Dtype>::one(),
                                       values_.get(), x, CudnnType<Dtype>::zero(), values_.get(),
                                       y));
  }
  // x is the forward input and y its output (the same array in place).
  void Backward(const Dtype* y, const Dtype* dy, const Dtype* x, Dtype* dx) const {
    CUDNN_CHECK(cudnnActivationBackward(CudnnHandle(), activation_.get(), CudnnType<Dtype>::one(),
                                        values_.get(), y, values_.get(), dy, values_.get(), x,
                                        CudnnType<Dtype>::zero(), values_.get(), dx));
  }

 private:
  CudnnActivation activation_;
  CudnnTensor values_;
  bool ready_ = false;
};

}  // namespace crema

#endif  // CREMA_CUDNN_CUDNN_ACTIVATION_HPP_
