#include "crema/layers/eltwise_layer.hpp"

#include "crema/util/math_functions.hpp"

namespace crema {

template <typename Dtype>
void EltwiseLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                     const std::vector<Blob<Dtype>*>& top) {
  const EltwiseParameter& param = this->layer_param_.eltwise_param();
  operation_ = param.operation();
  // A file cannot hold an unknown operation (the parsers refuse or drop it);
  // a parameter built in code can.
  CREMA_LAYER_REQUIRE(
      EltwiseParameter::EltwiseOp_IsValid(operation_),
      "unknown operation " << static_cast<int>(operation_) << "; expected PROD, SUM or MAX");
  stable_prod_grad_ = param.stable_prod_grad();
  CREMA_LAYER_REQUIRE(
      param.coeff_size() == 0 || param.coeff_size() == static_cast<int>(bottom.size()),
      "takes one coeff per bottom, got " << param.coeff_size() << " coeffs for " << bottom.size()
                                         << " bottoms");
  CREMA_LAYER_REQUIRE(operation_ != EltwiseParameter::PROD || param.coeff_size() == 0,
                      "takes coeffs only for the SUM operation, not for PROD");
  // Caffe accepts and ignores them for MAX; so do we, but say so.
  LOG_IF(WARNING, operation_ == EltwiseParameter::MAX && param.coeff_size() > 0)
      << "layer '" << this->layer_param_.name() << "' (Eltwise): coeffs are ignored for MAX";
  coeffs_.assign(bottom.size(), Dtype(1));
  if (operation_ == EltwiseParameter::SUM) {
    for (int i = 0; i < param.coeff_size(); ++i) coeffs_[i] = param.coeff(i);
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  for (size_t i = 1; i < bottom.size(); ++i) {
    CREMA_LAYER_REQUIRE(bottom[i]->shape() == bottom[0]->shape(),
                        "bottom " << i << " has shape " << bottom[i]->shape_string()
                                  << " and bottom 0 has shape " << bottom[0]->shape_string()
                                  << ": all bottoms must have the same shape");
  }
  top[0]->ReshapeLike(*bottom[0]);
  if (lent_gradient_bottom_ >= 0) bottom[lent_gradient_bottom_]->ShareDiff(*top[0]);
  if (operation_ == EltwiseParameter::MAX) {
    const size_t mask_size = static_cast<size_t>(bottom[0]->count()) * sizeof(int);
    if (!max_index_ || max_index_->size() < mask_size) {
      max_index_.reset(new SyncedMemory(mask_size));
    }
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const int count = top[0]->count();
  Dtype* top_data = top[0]->mutable_cpu_data();
  switch (operation_) {
    case EltwiseParameter::PROD:
      cpu_mul(count, bottom[0]->cpu_data(), bottom[1]->cpu_data(), top_data);
      for (size_t i = 2; i < bottom.size(); ++i) {
        cpu_mul(count, top_data, bottom[i]->cpu_data(), top_data);
      }
      break;
    case EltwiseParameter::SUM: {
      std::vector<const Dtype*> inputs;
      for (const Blob<Dtype>* blob : bottom) inputs.push_back(blob->cpu_data());
      cpu_weighted_sum(count, inputs, coeffs_, top_data);
      break;
    }
    case EltwiseParameter::MAX: {
      int* max_index = static_cast<int*>(max_index_->mutable_cpu_data());
      cpu_copy(count, bottom[0]->cpu_data(), top_data);
      cpu_set(count, 0, max_index);
      // Strictly greater: on ties the earlier bottom keeps the element.
      for (size_t i = 1; i < bottom.size(); ++i) {
        const Dtype* bottom_data = bottom[i]->cpu_data();
        for (int j = 0; j < count; ++j) {
          if (bottom_data[j] > top_data[j]) {
            top_data[j] = bottom_data[j];
            max_index[j] = static_cast<int>(i);
          }
        }
      }
      break;
    }
    default:  // Invariant: LayerSetUp refused unknown operations.
      LOG(FATAL) << "unknown Eltwise operation " << operation_;
  }
}

template <typename Dtype>
void EltwiseLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                       const std::vector<bool>& propagate_down,
                                       const std::vector<Blob<Dtype>*>& bottom) {
  const int count = top[0]->count();
  const Dtype* top_diff = top[0]->cpu_diff();
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate_down[i]) continue;
    Dtype* bottom_diff = bottom[i]->mutable_cpu_diff();
    switch (operation_) {
      case EltwiseParameter::PROD:
        if (stable_prod_grad_) {
          bool started = false;
          for (size_t j = 0; j < bottom.size(); ++j) {
            if (j == i) continue;
            if (started) {
              cpu_mul(count, bottom_diff, bottom[j]->cpu_data(), bottom_diff);
            } else {
              cpu_copy(count, bottom[j]->cpu_data(), bottom_diff);
              started = true;
            }
          }
        } else {
          cpu_div(count, top[0]->cpu_data(), bottom[i]->cpu_data(), bottom_diff);
        }
        cpu_mul(count, bottom_diff, top_diff, bottom_diff);
        break;
      case EltwiseParameter::SUM:
        if (bottom_diff != top_diff) cpu_scale(count, coeffs_[i], top_diff, bottom_diff);
        break;
      case EltwiseParameter::MAX: {
        const int* max_index = static_cast<const int*>(max_index_->cpu_data());
        for (int j = 0; j < count; ++j) {
          bottom_diff[j] = max_index[j] == static_cast<int>(i) ? top_diff[j] : Dtype(0);
        }
        break;
      }
      default:  // Invariant: LayerSetUp refused unknown operations.
        LOG(FATAL) << "unknown Eltwise operation " << operation_;
    }
  }
}

#ifndef CREMA_CUDA
STUB_GPU(EltwiseLayer);
#endif

INSTANTIATE_CLASS(EltwiseLayer);
REGISTER_LAYER_CLASS(Eltwise);

}  // namespace crema
