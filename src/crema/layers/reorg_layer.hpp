// Reorg (the YOLOv2 forks' passthrough layer, reorg_param { stride reverse }):
// darknet's reorganisation of a [N, C, H, W] bottom into [N, C s^2, H / s,
// W / s] (reverse: [N, C / s^2, H s, W s]), with darknet's own index map,
// which is not a space-to-depth of the bottom: with C' = C / s^2, the
// bottom's memory read as [N, C', H s, W s] (A) and the top's as [N, C, H,
// W] (B, H and W the bottom's),
//   B[n][(i s + j) C' + c][h][w] = A[n][c][h s + i][w s + j],   i, j < s;
// reverse is the inverse map. Backward sends each gradient back through the
// map (the forks' CPU backward reads a buffer nothing writes, and gives
// zeros).
#ifndef CREMA_LAYERS_REORG_LAYER_HPP_
#define CREMA_LAYERS_REORG_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class ReorgLayer : public Layer<Dtype> {
 public:
  explicit ReorgLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Reorg"; }
  int ExactNumBottomBlobs() const override { return 1; }
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
  int stride_ = 1;
  bool reverse_ = false;
  // The bottom's sizes, which darknet's map is written in.
  int num_ = 0, channels_ = 0, height_ = 0, width_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_REORG_LAYER_HPP_
