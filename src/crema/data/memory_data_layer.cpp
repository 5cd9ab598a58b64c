#include "crema/layers/memory_data_layer.hpp"

namespace crema {

template <typename Dtype>
void MemoryDataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  const MemoryDataParameter& param = this->layer_param_.memory_data_param();
  batch_size_ = static_cast<int>(param.batch_size());
  channels_ = static_cast<int>(param.channels());
  height_ = static_cast<int>(param.height());
  width_ = static_cast<int>(param.width());
  size_ = channels_ * height_ * width_;
  CREMA_LAYER_REQUIRE(batch_size_ > 0 && size_ > 0,
                      "batch_size, channels, height and width must all be positive, got "
                          << batch_size_ << ", " << channels_ << ", " << height_ << ", " << width_);
  top[0]->Reshape(batch_size_, channels_, height_, width_);
  top[1]->Reshape(std::vector<int>{batch_size_});
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::Reset(Dtype* data, Dtype* labels, int n) {
  CREMA_LAYER_REQUIRE(data && labels, "Reset needs data and labels");
  CREMA_LAYER_REQUIRE(n > 0 && n % batch_size_ == 0,
                      n << " items is not a multiple of the batch size " << batch_size_);
  data_ = data;
  labels_ = labels;
  n_ = n;
  pos_ = 0;
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::AddDatumVector(const std::vector<Datum>& datums) {
  const int num = static_cast<int>(datums.size());
  CREMA_LAYER_REQUIRE(num > 0 && num % batch_size_ == 0,
                      num << " datums is not a multiple of the batch size " << batch_size_);
  added_data_.Reshape(num, channels_, height_, width_);
  added_label_.Reshape(std::vector<int>{num});
  this->data_transformer_->Transform(datums, &added_data_);
  Dtype* labels = added_label_.mutable_cpu_data();
  for (int i = 0; i < num; ++i) labels[i] = static_cast<Dtype>(datums[i].label());
  Reset(added_data_.mutable_cpu_data(), labels, num);
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::set_batch_size(int new_size) {
  CREMA_LAYER_REQUIRE(new_size > 0, "batch size must be positive");
  CREMA_LAYER_REQUIRE(!data_ || n_ % new_size == 0, "batch size " << new_size
                                                                  << " does not divide the " << n_
                                                                  << " items already given");
  batch_size_ = new_size;
  pos_ = 0;
}

template <typename Dtype>
void MemoryDataLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(data_, "no data: call Reset or AddDatumVector before Forward");
  top[0]->Reshape(batch_size_, channels_, height_, width_);
  top[1]->Reshape(std::vector<int>{batch_size_});
  cpu_copy(batch_size_ * size_, data_ + pos_ * size_, top[0]->mutable_cpu_data());
  cpu_copy(batch_size_, labels_ + pos_, top[1]->mutable_cpu_data());
  pos_ = (pos_ + batch_size_) % n_;
}

INSTANTIATE_CLASS(MemoryDataLayer);
REGISTER_LAYER_CLASS(MemoryData);

}  // namespace crema
