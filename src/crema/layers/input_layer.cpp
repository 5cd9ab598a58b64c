#include "crema/layers/input_layer.hpp"

namespace crema {

template <typename Dtype>
void InputLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const InputParameter& param = this->layer_param_.input_param();
  const int num_shapes = param.shape_size();
  const int num_tops = static_cast<int>(top.size());
  CREMA_LAYER_REQUIRE(num_shapes == 0 || num_shapes == 1 || num_shapes == num_tops,
                      "input_param gives " << num_shapes << " shapes for " << num_tops
                                           << " tops; give one shape for all tops, one per "
                                           << "top, or none");
  if (num_shapes == 0) return;
  for (int t = 0; t < num_tops; ++t) {
    const BlobShape& shape = param.shape(num_shapes == 1 ? 0 : t);
    for (int i = 0; i < shape.dim_size(); ++i) {
      CREMA_LAYER_REQUIRE(shape.dim(i) >= 0, "input_param shape for top "
                                                 << t << " has a negative dimension ("
                                                 << shape.dim(i) << ")");
    }
    top[t]->Reshape(shape);
  }
}

INSTANTIATE_CLASS(InputLayer);
REGISTER_LAYER_CLASS(Input);

}  // namespace crema
