// The skeleton every oneDNN twin shares. A twin derives from the reference
// layer of its type (its blobs, set-up and CPU body); it makes oneDNN
// primitives once per shape (Reshape runs before every pass) into its
// Primitives, and where it makes none the reference body runs: a setting or
// shape oneDNN cannot express, engine DEFAULT's measured rule for the shape
// (default_policy.hpp), or a dnnl::error, which it logs as a warning naming
// the layer. Each new shape's body is logged (LogBodyForShape).
//
// A twin is its type's "oneDNN" body (layer_bodies.hpp), registered with
// REGISTER_DNNL_BODY at the bottom of its .cpp.
//
// Primitives is the twin's own struct, defined in its .cpp; the members
// below are defined in dnnl_twin_impl.hpp, which each twin's .cpp includes
// and instantiates.
#ifndef CREMA_DNNL_DNNL_TWIN_HPP_
#define CREMA_DNNL_DNNL_TWIN_HPP_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crema/layer.hpp"
#include "crema/layer_bodies.hpp"

namespace crema {

template <typename Dtype, template <typename> class Reference, typename Primitives>
class DnnlTwin : public Reference<Dtype> {
 public:
  explicit DnnlTwin(const LayerParameter& param);
  ~DnnlTwin() override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  // Whether the current shape runs on oneDNN (else on the reference body).
  bool uses_dnnl() const { return static_cast<bool>(primitives_); }

 protected:
  // What the primitives are made for: a new value makes them anew (by
  // default, bottom 0's shape).
  virtual std::vector<int> PrimitiveShape(const std::vector<Blob<Dtype>*>& bottom) const;
  // Makes the primitives for the current shape into p; false where the twin
  // leaves the shape to the reference body (through LeaveToReference, which
  // says why). Throws dnnl::error where oneDNN has none.
  virtual bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                              const std::vector<Blob<Dtype>*>& top, Primitives* p) = 0;
  // What oneDNN would compute, for the warning ("softmax").
  virtual const char* DnnlOperation() const = 0;
  // After primitives are made: the twin's buffers for them.
  virtual void PrimitivesMade() {}

  // For MakePrimitives: leaves the shape to the reference body, for the
  // reason given (logged); returns false.
  bool LeaveToReference(std::string why) {
    reference_why_ = std::move(why);
    return false;
  }

  // Whether the layer's engine is DEFAULT: the twin then asks DEFAULT's
  // measured rules for its type (default_policy.hpp) shape by shape; with
  // engine DNNL it runs oneDNN wherever oneDNN serves.
  const bool by_default_;
  std::unique_ptr<Primitives> primitives_;  // null: the reference body runs

 private:
  std::vector<int> primitive_shape_;
  std::string reference_why_;
};

// The "oneDNN" body of a type whose twin is Twin: CPU mode, float data;
// for engine DNNL, and for DEFAULT where by_default (why: the measurement
// behind the choice, either way).
template <typename Twin>
Body<float> DnnlBody(bool by_default, const char* why) {
  return Body<float>{[by_default, why](const BodyRequest& r) {
                       return LibraryBodyServes(r, false, Engine::kDnnl, by_default, why);
                     },
                     [](const LayerParameter& param) { return std::make_shared<Twin>(param); }};
}
Body<double> DnnlFloatOnlyBody();

}  // namespace crema

// Registers Twin as type's "oneDNN" body (DnnlBody), and for double data a
// body that never serves (oneDNN's twins are float only).
#define REGISTER_DNNL_BODY(type, Twin, by_default, why)                        \
  static ::crema::BodyRegisterer<float> g_dnnl_body_f_##type(                  \
      #type, "oneDNN", ::crema::DnnlBody<Twin>(by_default, why));              \
  static ::crema::BodyRegisterer<double> g_dnnl_body_d_##type(#type, "oneDNN", \
                                                              ::crema::DnnlFloatOnlyBody())

#endif  // CREMA_DNNL_DNNL_TWIN_HPP_
