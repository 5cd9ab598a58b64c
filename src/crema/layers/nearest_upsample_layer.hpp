// Upsample of the YOLO forks (eric612/MobileNet-YOLO, caffe-yolov3): nearest
// neighbour, each value copied into a scale x scale block, top[n][c][h][w] =
// bottom[n][c][h / scale][w / scale] on a [N, C, H * scale, W * scale] top.
// Backward sums each block's gradient into its value. The YOLO forks' layer
// shares its type string with SegNet's max unpooling (UpsampleLayer): a
// layer of one bottom whose upsample_param sets nothing but scale is this
// one (see CreateUpsampleLayer).
#ifndef CREMA_LAYERS_NEAREST_UPSAMPLE_LAYER_HPP_
#define CREMA_LAYERS_NEAREST_UPSAMPLE_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class NearestUpsampleLayer : public Layer<Dtype> {
 public:
  explicit NearestUpsampleLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Upsample"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

  // Whether an Upsample layer's parameter is the YOLO forks' (one bottom,
  // nothing but scale): the only rule that tells the two layers apart.
  static bool IsYoloForm(const LayerParameter& param);

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
  int scale_ = 1;
  int planes_ = 0;  // N * C
  int height_ = 0, width_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_NEAREST_UPSAMPLE_LAYER_HPP_
