// Crop: cuts bottom[0] down to the shape of bottom[1] on the axes from axis on
// (the earlier axes keep bottom[0]'s sizes), starting at the given offsets.
// bottom[1] gives only its shape.
#ifndef CREMA_LAYERS_CROP_LAYER_HPP_
#define CREMA_LAYERS_CROP_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class CropLayer : public Layer<Dtype> {
 public:
  explicit CropLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "Crop"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }

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
  // Index in bottom[0] of the first element of a row (the last axis) of the top.
  int BottomIndexOfTopRow(int row) const;

  std::vector<int> top_shape_;
  std::vector<int> bottom_strides_;
  // Where the crop starts on each axis of bottom[0] (0 before axis).
  std::vector<int> offsets_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_CROP_LAYER_HPP_
