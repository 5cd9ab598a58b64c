// Fillers give a blob its initial values, as a FillerParameter describes:
// constant, uniform, gaussian (optionally sparse), positive_unitball,
// xavier, msra and bilinear. Random ones draw from the calling thread's RNG.
#ifndef CREMA_FILLER_HPP_
#define CREMA_FILLER_HPP_

#include <memory>

#include "crema/blob.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

template <typename Dtype>
class Filler {
 public:
  explicit Filler(const FillerParameter& param) : filler_param_(param) {}
  virtual ~Filler() = default;
  virtual void Fill(Blob<Dtype>* blob) = 0;

 protected:
  FillerParameter filler_param_;
};

// The filler for param.type(); an unknown type is a user error (Error) that
// names the type and lists the known ones.
template <typename Dtype>
std::unique_ptr<Filler<Dtype>> GetFiller(const FillerParameter& param);

}  // namespace crema

#endif  // CREMA_FILLER_HPP_
