// Input: the entry point of a net whose data the caller provides. It has no
// bottoms; set-up shapes the tops from input_param.shape (one shape for every
// top, or one per top; none leaves them as they are), and Forward leaves the
// tops' contents and shapes to the caller.
#ifndef CREMA_LAYERS_INPUT_LAYER_HPP_
#define CREMA_LAYERS_INPUT_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class InputLayer : public Layer<Dtype> {
 public:
  explicit InputLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  // The caller may reshape the tops between passes; that shape stands.
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override {}

  const char* type() const override { return "Input"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  bool ProvidesNetInputs() const override { return true; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override {}
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}
};

}  // namespace crema

#endif  // CREMA_LAYERS_INPUT_LAYER_HPP_
