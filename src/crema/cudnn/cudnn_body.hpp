// A cuDNN twin as its type's "cuDNN" body (layer_bodies.hpp): GPU mode, float
// and double data, for engines DEFAULT and CUDNN.
#ifndef CREMA_CUDNN_CUDNN_BODY_HPP_
#define CREMA_CUDNN_CUDNN_BODY_HPP_

#include <memory>
#include <string>

#include "crema/layer_bodies.hpp"

namespace crema {

template <typename Dtype, template <typename> class Twin>
Body<Dtype> CudnnBody() {
  return Body<Dtype>{
      [](const BodyRequest& r) {
        return LibraryBodyServes(r, true, Engine::kCudnn, true, "cuDNN wherever the build has it");
      },
      [](const LayerParameter& param) { return std::make_shared<Twin<Dtype>>(param); }};
}

}  // namespace crema

// In src/crema/cudnn/: registers Cudnn##type##Layer as type's cuDNN body.
#define REGISTER_CUDNN_BODY(type)                                                \
  static ::crema::BodyRegisterer<float> g_cudnn_body_f_##type(                   \
      #type, "cuDNN", ::crema::CudnnBody<float, ::crema::Cudnn##type##Layer>()); \
  static ::crema::BodyRegisterer<double> g_cudnn_body_d_##type(                  \
      #type, "cuDNN", ::crema::CudnnBody<double, ::crema::Cudnn##type##Layer>())

#endif  // CREMA_CUDNN_CUDNN_BODY_HPP_
