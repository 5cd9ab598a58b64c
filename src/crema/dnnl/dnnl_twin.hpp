// The skeleton every oneDNN twin shares. A twin derives from the reference
// layer of its type (its blobs, set-up and CPU body); it makes oneDNN
// primitives once per shape (Reshape runs before every pass) into its
// Primitives, and where it makes none the reference body runs: a setting or
// shape oneDNN cannot express, engine DEFAULT's choice (default_policy.hpp),
// or a dnnl::error, which it logs as a warning naming the layer.
//
// Primitives is the twin's own struct, defined in its .cpp; the members
// below are defined in dnnl_twin_impl.hpp, which each twin's .cpp includes
// and instantiates.
#ifndef CREMA_DNNL_DNNL_TWIN_HPP_
#define CREMA_DNNL_DNNL_TWIN_HPP_

#include <memory>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype, template <typename> class Reference, typename Primitives>
class DnnlTwin : public Reference<Dtype> {
 public:
  // for_default: made for engine DEFAULT, which asks default_policy.hpp
  // shape by shape (else DNNL: oneDNN wherever it serves).
  DnnlTwin(const LayerParameter& param, bool for_default);
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
  // leaves the shape to the reference body. Throws dnnl::error where oneDNN
  // has none.
  virtual bool MakePrimitives(const std::vector<Blob<Dtype>*>& bottom,
                              const std::vector<Blob<Dtype>*>& top, Primitives* p) = 0;
  // What oneDNN would compute, for the warning ("softmax").
  virtual const char* DnnlOperation() const = 0;
  // After primitives are made: the twin's buffers for them.
  virtual void PrimitivesMade() {}

  const bool for_default_;
  std::unique_ptr<Primitives> primitives_;  // null: the reference body runs

 private:
  std::vector<int> primitive_shape_;
};

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_TWIN_HPP_
