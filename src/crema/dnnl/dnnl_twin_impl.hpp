// The members of DnnlTwin (dnnl_twin.hpp), for the twins' .cpp files.
#ifndef CREMA_DNNL_DNNL_TWIN_IMPL_HPP_
#define CREMA_DNNL_DNNL_TWIN_IMPL_HPP_

#include <type_traits>
#include <utility>
#include <vector>

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin.hpp"

namespace crema {

template <typename Dtype, template <typename> class Reference, typename Primitives>
DnnlTwin<Dtype, Reference, Primitives>::DnnlTwin(const LayerParameter& param)
    : Reference<Dtype>(param), by_default_(EngineOf(param) == Engine::kDefault) {
  static_assert(std::is_same<Dtype, float>::value, "oneDNN layers are float only");
}

template <typename Dtype, template <typename> class Reference, typename Primitives>
DnnlTwin<Dtype, Reference, Primitives>::~DnnlTwin() = default;

template <typename Dtype, template <typename> class Reference, typename Primitives>
std::vector<int> DnnlTwin<Dtype, Reference, Primitives>::PrimitiveShape(
    const std::vector<Blob<Dtype>*>& bottom) const {
  return bottom[0]->shape();
}

template <typename Dtype, template <typename> class Reference, typename Primitives>
void DnnlTwin<Dtype, Reference, Primitives>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                                     const std::vector<Blob<Dtype>*>& top) {
  Reference<Dtype>::Reshape(bottom, top);
  std::vector<int> shape = PrimitiveShape(bottom);
  if (shape == primitive_shape_) return;
  primitive_shape_ = std::move(shape);
  primitives_.reset();
  std::unique_ptr<Primitives> p(new Primitives());
  reference_why_ = "a setting oneDNN's twin does not take";
  try {
    DnnlUseThreadBudget();
    if (!MakePrimitives(bottom, top, p.get())) {
      LogBodyForShape(this->layer_param_, primitive_shape_, "reference body", reference_why_);
      return;
    }
  } catch (const dnnl::error& e) {
    LOG(WARNING) << "layer '" << this->layer_param_.name() << "': oneDNN has no " << DnnlOperation()
                 << " here (" << e.what() << "); the reference body runs";
    return;
  }
  primitives_ = std::move(p);
  LogBodyForShape(this->layer_param_, primitive_shape_, "oneDNN",
                  by_default_ ? "engine DEFAULT" : "engine DNNL");
  PrimitivesMade();
}

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_TWIN_IMPL_HPP_
