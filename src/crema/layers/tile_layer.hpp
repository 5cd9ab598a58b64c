// Tile: repeats its bottom `tiles` times along one axis: the top holds the
// blocks of axes [axis, end) one after another. Backward sums the copies'
// gradients.
#ifndef CREMA_LAYERS_TILE_LAYER_HPP_
#define CREMA_LAYERS_TILE_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class TileLayer : public Layer<Dtype> {
 public:
  explicit TileLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Tile"; }
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
  int tiles_ = 1;
  // The bottom viewed as outer_count_ blocks of inner_count_ elements (axes
  // before the tiled one, and from it on); each block is repeated.
  int outer_count_ = 0;
  int inner_count_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_TILE_LAYER_HPP_
