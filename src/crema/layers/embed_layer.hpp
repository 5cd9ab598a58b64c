// Embed: a lookup table. Each bottom value is an integer index in
// [0, input_dim) (stored as a float) and selects one row of the
// input_dim x num_output weights; the top has the bottom's shape plus a last
// axis of num_output, with the bias (num_output entries) added to every row.
// The indices get no gradient.
#ifndef CREMA_LAYERS_EMBED_LAYER_HPP_
#define CREMA_LAYERS_EMBED_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class EmbedLayer : public Layer<Dtype> {
 public:
  explicit EmbedLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Embed"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return false; }

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
  // Every index must be a whole number in [0, input_dim): a user error if not.
  void CheckIndices(const Blob<Dtype>& indices) const;
  void RefuseBottomGradient(const std::vector<bool>& propagate_down) const;

  int num_indices_ = 0;  // M: lookups per forward, the bottom's count
  int input_dim_ = 0;    // K: rows of the table
  int num_output_ = 0;   // N: length of each row
  bool bias_term_ = true;
  // M ones: the bias is added as the rank-1 product ones * b^T.
  Blob<Dtype> bias_multiplier_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_EMBED_LAYER_HPP_
