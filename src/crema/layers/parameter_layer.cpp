#include "crema/layers/parameter_layer.hpp"

namespace crema {

template <typename Dtype>
void ParameterLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const BlobShape& shape = this->layer_param_.parameter_param().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    CREMA_LAYER_REQUIRE(shape.dim(i) > 0, "parameter_param.shape dimension "
                                              << i << " must be positive, got " << shape.dim(i));
  }
  if (this->blobs_.empty()) {
    // A new blob's memory reads as zeros.
    this->blobs_.emplace_back(new Blob<Dtype>());
    this->blobs_[0]->Reshape(shape);
    return;
  }
  CREMA_LAYER_REQUIRE(this->blobs_.size() == 1,
                      "holds one blob, but the model brings " << this->blobs_.size());
  Blob<Dtype> expected;
  expected.Reshape(shape);
  CREMA_LAYER_REQUIRE(this->blobs_[0]->shape() == expected.shape(),
                      "the model's blob has shape " << this->blobs_[0]->shape_string()
                                                    << ", but parameter_param.shape is "
                                                    << expected.shape_string());
}

// Sharing here rather than once at set-up keeps the top on the blob's memory
// even if the net later points the blob at another's (shared weights).
template <typename Dtype>
void ParameterLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                    const std::vector<Blob<Dtype>*>& top) {
  top[0]->ReshapeLike(*this->blobs_[0]);
  top[0]->ShareData(*this->blobs_[0]);
}

// The top keeps a diff of its own, so the blob's diff accumulates over
// backward passes (iter_size) like every other parameter's.
template <typename Dtype>
void ParameterLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                         const std::vector<bool>& propagate_down,
                                         const std::vector<Blob<Dtype>*>& bottom) {
  if (!this->param_propagate_down(0) || top[0]->count() == 0) return;
  cpu_axpy(top[0]->count(), Dtype(1), top[0]->cpu_diff(), this->blobs_[0]->mutable_cpu_diff());
}

#ifndef CREMA_CUDA
STUB_GPU(ParameterLayer);
#endif

INSTANTIATE_CLASS(ParameterLayer);
REGISTER_LAYER_CLASS(Parameter);

}  // namespace crema
