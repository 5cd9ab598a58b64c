// DataTransformer: turns a record (Datum) or a blob into a network input:
// crop (random at TRAIN, centred at TEST), mirror (random), mean subtraction
// (a mean file or per-channel values) and scaling, in that order:
//   out = (in - mean) * scale.
// Random choices draw from the calling thread's generator (Context::rng()),
// so each prefetch thread has its own reproducible stream.
#ifndef CREMA_DATA_TRANSFORMER_HPP_
#define CREMA_DATA_TRANSFORMER_HPP_

#include <vector>

#include "crema/blob.hpp"
#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

template <typename Dtype>
class DataTransformer {
 public:
  // Reads the mean file (a BlobProto .binaryproto) if one is given; a missing
  // file, or mean_file together with mean_value, is a user error.
  DataTransformer(const TransformationParameter& param, Phase phase);

  // The shape a transformed datum takes: [1, channels, height', width'].
  std::vector<int> InferBlobShape(const Datum& datum) const;

  // Writes one transformed datum into `out` (channels * height' * width'
  // values). Raw uint8 or float data; an encoded (JPEG/PNG) datum is a user
  // error in this build (no OpenCV).
  void Transform(const Datum& datum, Dtype* out);
  // Into a blob of shape [1, C, H', W'] (or into item 0 of a larger blob).
  void Transform(const Datum& datum, Blob<Dtype>* transformed);
  // A batch of datums into a blob of shape [N, C, H', W'].
  void Transform(const std::vector<Datum>& datums, Blob<Dtype>* transformed);
  // A blob of raw values [N, C, H, W] into [N, C, H', W'].
  void Transform(Blob<Dtype>* input, Blob<Dtype>* transformed);
  // Raw arrays: `in` holds channels x height x width values.
  void Transform(const Dtype* in, int channels, int height, int width, Dtype* out);

  const TransformationParameter& param() const { return param_; }

 private:
  // Where the crop starts and whether to mirror, drawn once per item.
  struct Choice {
    int h_off = 0;
    int w_off = 0;
    bool mirror = false;
  };
  Choice Choose(int height, int width);
  void CheckSize(int channels, int height, int width) const;
  template <typename Source>
  void TransformValues(const Source* in, int channels, int height, int width, Dtype* out);
  int Rand(int n);

  TransformationParameter param_;
  Phase phase_;
  Blob<Dtype> data_mean_;
  std::vector<Dtype> mean_values_;
};

}  // namespace crema

#endif  // CREMA_DATA_TRANSFORMER_HPP_
