// The device bodies of the SGD family's per-parameter rules (sgd_solvers.cu),
// for sgd_solvers.cpp alone. Each turns the gradient g (n values) in place
// into the step to subtract and updates the history, with the formula of the
// rule's CPU loop; rate is the parameter's local learning rate.
#ifndef CREMA_SGD_UPDATE_GPU_HPP_
#define CREMA_SGD_UPDATE_GPU_HPP_

namespace crema {

template <typename Dtype>
void sgd_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype rate);
template <typename Dtype>
void nesterov_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype rate);
template <typename Dtype>
void adagrad_update_gpu(int n, Dtype* g, Dtype* h, Dtype delta, Dtype rate);
template <typename Dtype>
void rmsprop_update_gpu(int n, Dtype* g, Dtype* h, Dtype rms_decay, Dtype delta, Dtype rate);
// h: the running mean of squared gradients, h2: that of squared updates.
template <typename Dtype>
void adadelta_update_gpu(int n, Dtype* g, Dtype* h, Dtype* h2, Dtype momentum, Dtype delta,
                         Dtype rate);
// m, v: the first and second moments; corrected_rate: rate times Adam's bias
// correction, computed once on the host as the CPU body does.
template <typename Dtype>
void adam_update_gpu(int n, Dtype* g, Dtype* m, Dtype* v, Dtype beta1, Dtype beta2, Dtype eps,
                     Dtype corrected_rate);
// L1 weight decay: diff += decay * sign(data).
template <typename Dtype>
void l1_regularize_gpu(int n, Dtype decay, const Dtype* data, Dtype* diff);

}  // namespace crema

#endif  // CREMA_SGD_UPDATE_GPU_HPP_
