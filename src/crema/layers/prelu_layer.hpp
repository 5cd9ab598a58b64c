// PReLU (He et al., 2015): y = max(0, x) + slope * min(0, x) with a learnable
// slope per channel (axis 1), or one slope for all channels (channel_shared).
#ifndef CREMA_LAYERS_PRELU_LAYER_HPP_
#define CREMA_LAYERS_PRELU_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class PReLULayer : public NeuronLayer<Dtype> {
 public:
  explicit PReLULayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "PReLU"; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  int NumSlopes() const { return this->blobs_[0]->count(); }

  bool channel_shared_ = false;
  // Backward needs x; in place, forward keeps a copy of it here.
  Blob<Dtype> bottom_copy_;
  // GPU slope gradient, reduced without atomics: per-element terms, their sums
  // per (sample, slope), and a vector of ones for the gemv reductions.
  Blob<Dtype> slope_terms_;
  Blob<Dtype> per_sample_sums_;
  Blob<Dtype> ones_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_PRELU_LAYER_HPP_
