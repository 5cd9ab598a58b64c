// HDF5Output: writes its two bottoms to datasets "data" and "label" of an
// HDF5 file (hdf5_output_param.file_name), appending each forward's batch as
// new rows, so a whole test pass ends up in one file.
#ifndef CREMA_LAYERS_HDF5_OUTPUT_LAYER_HPP_
#define CREMA_LAYERS_HDF5_OUTPUT_LAYER_HPP_

#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class HDF5OutputLayer : public Layer<Dtype> {
 public:
  explicit HDF5OutputLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  ~HDF5OutputLayer() override;
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override {}
  const char* type() const override { return "HDF5Output"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 0; }

  // Rows written so far.
  int rows_written() const { return rows_; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

 private:
  void Append(const char* name, const Blob<Dtype>& blob);
  long file_id_ = -1;
  int rows_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_HDF5_OUTPUT_LAYER_HPP_
