// Log: y = log_base(shift + scale * x), the natural log when base is -1.
#ifndef CREMA_LAYERS_LOG_LAYER_HPP_
#define CREMA_LAYERS_LOG_LAYER_HPP_

#include <vector>

#include "crema/layers/neuron_layer.hpp"

namespace crema {

template <typename Dtype>
class LogLayer : public NeuronLayer<Dtype> {
 public:
  explicit LogLayer(const LayerParameter& param) : NeuronLayer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Log"; }

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
  // 1 / ln(base): y = base_scale_ * ln(shift + scale * x).
  Dtype base_scale_ = 1;
  Dtype input_scale_ = 1;
  Dtype input_shift_ = 0;
  // Backward needs x; in place, forward keeps a copy of it here.
  Blob<Dtype> bottom_copy_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_LOG_LAYER_HPP_
