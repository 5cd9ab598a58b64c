// MemoryData: serves batches from arrays the caller hands over (Reset), for
// feeding a net from C++. One instance serves every solver thread
// (ShareInParallel), each Forward taking the next batch under the layer's lock.
#ifndef CREMA_LAYERS_MEMORY_DATA_LAYER_HPP_
#define CREMA_LAYERS_MEMORY_DATA_LAYER_HPP_

#include <vector>

#include "crema/layers/base_data_layer.hpp"

namespace crema {

template <typename Dtype>
class MemoryDataLayer : public BaseDataLayer<Dtype> {
 public:
  explicit MemoryDataLayer(const LayerParameter& param) : BaseDataLayer<Dtype>(param) {}
  void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "MemoryData"; }
  int ExactNumTopBlobs() const override { return 2; }
  bool ShareInParallel() const override { return true; }

  // Serves n items from data (n x channels x height x width values) and
  // labels (n values); n must be a multiple of the batch size. The caller
  // keeps the arrays alive while the layer uses them.
  void Reset(Dtype* data, Dtype* labels, int n);
  // Transforms the datums (with transform_param) into the layer's own storage
  // and serves them; their count must be a multiple of the batch size.
  void AddDatumVector(const std::vector<Datum>& datums);
  void set_batch_size(int new_size);

  int batch_size() const { return batch_size_; }
  int channels() const { return channels_; }
  int height() const { return height_; }
  int width() const { return width_; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;

  int batch_size_ = 0, channels_ = 0, height_ = 0, width_ = 0, size_ = 0;
  Dtype* data_ = nullptr;
  Dtype* labels_ = nullptr;
  int n_ = 0;
  int pos_ = 0;
  Blob<Dtype> added_data_;
  Blob<Dtype> added_label_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_MEMORY_DATA_LAYER_HPP_
