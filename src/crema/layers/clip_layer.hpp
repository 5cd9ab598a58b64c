// Clip: y = min(max(x, min), max). The gradient passes where min <= x <= max.
#ifndef CREMA_LAYERS_CLIP_LAYER_HPP_
#define CREMA_LAYERS_CLIP_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class ClipLayer : public NeuronLayer<Dtype> {
 public:
  explicit ClipLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Clip"; }

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
  Dtype min_ = 0;
  Dtype max_ = 0;
  // Backward needs x (a clipped y looks like an unclipped one); in place,
  // forward keeps a copy of it here.
  Blob<Dtype> bottom_copy_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_CLIP_LAYER_HPP_
