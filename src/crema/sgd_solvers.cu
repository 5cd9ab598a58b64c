// The SGD family's per-parameter rules on the device, so that GPU mode keeps
// parameters, gradients and history in device memory: one element-wise kernel
// per rule, each the CPU loop of sgd_solvers.cpp written in the same order.
// nvcc fuses multiply-adds, so the two agree to rounding, not bit for bit.
#include "crema/sgd_update_gpu.hpp"
#include "crema/util/device_alternate.hpp"

namespace crema {

// Runs an element-wise kernel over n values (kernel(n, args...)).
template <typename Kernel, typename... Args>
void LaunchSolverKernel(Kernel kernel, int n, Args... args) {
  kernel<<<CREMA_GET_BLOCKS(n), CREMA_CUDA_NUM_THREADS>>>(n, args...);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
__global__ void SGDUpdate(const int64_t n, Dtype* g, Dtype* h, Dtype momentum, Dtype rate) {
  CUDA_KERNEL_LOOP(i, n) { g[i] = h[i] = momentum * h[i] + rate * g[i]; }
}

template <typename Dtype>
void sgd_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype rate) {
  LaunchSolverKernel(SGDUpdate<Dtype>, n, g, h, momentum, rate);
}

template <typename Dtype>
__global__ void NesterovUpdate(const int64_t n, Dtype* g, Dtype* h, Dtype momentum, Dtype rate) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype previous = h[i];
    h[i] = momentum * h[i] + rate * g[i];
    g[i] = (1 + momentum) * h[i] - momentum * previous;
  }
}

template <typename Dtype>
void nesterov_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype rate) {
  LaunchSolverKernel(NesterovUpdate<Dtype>, n, g, h, momentum, rate);
}

template <typename Dtype>
__global__ void AdaGradUpdate(const int64_t n, Dtype* g, Dtype* h, Dtype delta, Dtype rate) {
  CUDA_KERNEL_LOOP(i, n) {
    h[i] += g[i] * g[i];
    g[i] = rate * g[i] / (sqrt(h[i]) + delta);
  }
}

template <typename Dtype>
void adagrad_update_gpu(int n, Dtype* g, Dtype* h, Dtype delta, Dtype rate) {
  LaunchSolverKernel(AdaGradUpdate<Dtype>, n, g, h, delta, rate);
}

template <typename Dtype>
__global__ void RMSPropUpdate(const int64_t n, Dtype* g, Dtype* h, Dtype rms_decay, Dtype delta,
                              Dtype rate) {
  CUDA_KERNEL_LOOP(i, n) {
    h[i] = rms_decay * h[i] + (1 - rms_decay) * g[i] * g[i];
    g[i] = rate * g[i] / (sqrt(h[i]) + delta);
  }
}

template <typename Dtype>
void rmsprop_update_gpu(int n, Dtype* g, Dtype* h, Dtype rms_decay, Dtype delta, Dtype rate) {
  LaunchSolverKernel(RMSPropUpdate<Dtype>, n, g, h, rms_decay, delta, rate);
}

template <typename Dtype>
__global__ void AdaDeltaUpdate(const int64_t n, Dtype* g, Dtype* h, Dtype* h2, Dtype momentum,
                               Dtype delta, Dtype rate) {
  CUDA_KERNEL_LOOP(i, n) {
    h[i] = momentum * h[i] + (1 - momentum) * g[i] * g[i];
    const Dtype update = g[i] * sqrt(h2[i] + delta) / sqrt(h[i] + delta);
    h2[i] = momentum * h2[i] + (1 - momentum) * update * update;
    g[i] = rate * update;
  }
}

template <typename Dtype>
void adadelta_update_gpu(int n, Dtype* g, Dtype* h, Dtype* h2, Dtype momentum, Dtype delta,
                         Dtype rate) {
  LaunchSolverKernel(AdaDeltaUpdate<Dtype>, n, g, h, h2, momentum, delta, rate);
}

template <typename Dtype>
__global__ void AdamUpdate(const int64_t n, Dtype* g, Dtype* m, Dtype* v, Dtype beta1, Dtype beta2,
                           Dtype eps, Dtype corrected_rate) {
  CUDA_KERNEL_LOOP(i, n) {
    m[i] = beta1 * m[i] + (1 - beta1) * g[i];
    v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
    g[i] = corrected_rate * m[i] / (sqrt(v[i]) + eps);
  }
}

template <typename Dtype>
void adam_update_gpu(int n, Dtype* g, Dtype* m, Dtype* v, Dtype beta1, Dtype beta2, Dtype eps,
                     Dtype corrected_rate) {
  LaunchSolverKernel(AdamUpdate<Dtype>, n, g, m, v, beta1, beta2, eps, corrected_rate);
}

template <typename Dtype>
__global__ void L1Regularize(const int64_t n, Dtype decay, const Dtype* data, Dtype* diff) {
  CUDA_KERNEL_LOOP(i, n) { diff[i] += decay * ((data[i] > 0) - (data[i] < 0)); }
}

template <typename Dtype>
void l1_regularize_gpu(int n, Dtype decay, const Dtype* data, Dtype* diff) {
  LaunchSolverKernel(L1Regularize<Dtype>, n, decay, data, diff);
}

#define INSTANTIATE_SGD_UPDATE_GPU(Dtype)                                                        \
  template void sgd_update_gpu<Dtype>(int, Dtype*, Dtype*, Dtype, Dtype);                        \
  template void nesterov_update_gpu<Dtype>(int, Dtype*, Dtype*, Dtype, Dtype);                   \
  template void adagrad_update_gpu<Dtype>(int, Dtype*, Dtype*, Dtype, Dtype);                    \
  template void rmsprop_update_gpu<Dtype>(int, Dtype*, Dtype*, Dtype, Dtype, Dtype);             \
  template void adadelta_update_gpu<Dtype>(int, Dtype*, Dtype*, Dtype*, Dtype, Dtype, Dtype);    \
  template void adam_update_gpu<Dtype>(int, Dtype*, Dtype*, Dtype*, Dtype, Dtype, Dtype, Dtype); \
  template void l1_regularize_gpu<Dtype>(int, Dtype, const Dtype*, Dtype*)

INSTANTIATE_SGD_UPDATE_GPU(float);
INSTANTIATE_SGD_UPDATE_GPU(double);

}  // namespace crema
