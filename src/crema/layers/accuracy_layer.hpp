// Accuracy: the fraction of label positions whose true class is among the
// top_k scores of bottom 0 along accuracy_param.axis (ties count against the
// true class). Positions labelled ignore_label are left out. An optional
// second top holds the accuracy of each class (shape [classes]). A metric,
// not a loss: its tops weigh 0 in the objective and it has no gradient.
#ifndef CREMA_LAYERS_ACCURACY_LAYER_HPP_
#define CREMA_LAYERS_ACCURACY_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class AccuracyLayer : public Layer<Dtype> {
 public:
  explicit AccuracyLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Accuracy"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  // Nothing to propagate, so force_backward must not ask for it.
  bool AllowForceBackward(int bottom_index) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  // Throws if asked to propagate to any bottom.
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

  int top_k_ = 1;
  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  // Labels are indexed as outer_num_ x inner_num_ around the class axis.
  int outer_num_ = 0;
  int num_classes_ = 0;
  int inner_num_ = 0;
  // How many non-ignored positions carry each class label.
  std::vector<int> class_totals_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_ACCURACY_LAYER_HPP_
