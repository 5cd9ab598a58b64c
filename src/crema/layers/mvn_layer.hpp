// MVN (mean-variance normalisation): subtracts the mean of each image's
// channel (or of each whole image, across_channels), and with
// normalize_variance divides by its standard deviation plus eps:
//   y = (x - mean) / (sqrt(var) + eps),
// eps added to the standard deviation (not the variance), as in Caffe.
#ifndef CREMA_LAYERS_MVN_LAYER_HPP_
#define CREMA_LAYERS_MVN_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class MVNLayer : public Layer<Dtype> {
 public:
  explicit MVNLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "MVN"; }
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
  // Mean of each row of a bottom-shaped array viewed as [rows_, row_dim_].
  void RowMeans_cpu(const Dtype* data, Dtype* means);
  void RowMeans_gpu(const Dtype* data, Dtype* means);

  bool normalize_variance_ = true;
  Dtype eps_ = 0;
  // The bottom viewed as [rows_, row_dim_]: one row per normalised group.
  int rows_ = 0;
  int row_dim_ = 0;

  Blob<Dtype> mean_;  // [rows_]
  Blob<Dtype> std_;   // [rows_], without eps
  // The normalised output, kept for backward (the top may be changed in
  // place by the next layer).
  Blob<Dtype> normalized_;
  // Backward's per-row means of the top diff and of top diff * y.
  Blob<Dtype> mean_top_diff_;
  Blob<Dtype> mean_top_diff_y_;
  // Element-wise scratch (squares, products).
  Blob<Dtype> scratch_;
  // Ones to reduce rows with on the GPU.
  Blob<Dtype> ones_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_MVN_LAYER_HPP_
