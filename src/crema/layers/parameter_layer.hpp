// Parameter: exposes one learned blob of the configured shape as its top, so
// a net can feed a parameter to any layer. The blob starts at zero unless the
// model brings trained values. The top shares the blob's data; Backward adds
// the top's gradient to the blob's diff.
#ifndef CREMA_LAYERS_PARAMETER_LAYER_HPP_
#define CREMA_LAYERS_PARAMETER_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class ParameterLayer : public Layer<Dtype> {
 public:
  explicit ParameterLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "Parameter"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  // Reshape already made the top show the blob's values.
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override {}
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
};

}  // namespace crema

#endif  // CREMA_LAYERS_PARAMETER_LAYER_HPP_
