// DataTransformer: turns a record (Datum) or a blob into a network input:
// crop (random at TRAIN, centred at TEST), mirror (random), mean subtraction
// (a mean file or per-channel values) and scaling, in that order:
//   out = (in - mean) * scale.
// At TRAIN, the augmentations of transform_param (random resized crop,
// rotation, colour jitter, random erasing; crema/util/augmentation.hpp)
// come around these steps when asked for.
// Random choices draw from the calling thread's generator (Context::rng()),
// so each prefetch thread has its own reproducible stream. In builds with
// OpenCV, encoded records (JPEG/PNG) are decoded first: as stored, or as
// colour (force_color) or grey (force_gray).
#ifndef CREMA_DATA_TRANSFORMER_HPP_
#define CREMA_DATA_TRANSFORMER_HPP_

#include <string>
#include <vector>

#ifdef CREMA_OPENCV
#include <opencv2/core/core.hpp>
#endif

#include "crema/blob.hpp"
#include "crema/common.hpp"
#include "crema/util/augmentation.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

template <typename Dtype>
class DataTransformer {
 public:
  // Reads the mean file (a BlobProto .binaryproto, 1 x C x H x W) if one is
  // given; a missing or malformed file, or mean_file together with
  // mean_value, is a user error naming it.
  DataTransformer(const TransformationParameter& param, Phase phase);
  // The same with a mean held in memory (Python's Transformer.set_mean), one
  // image, 1 x channels x height x width, subtracted as a mean file's is;
  // `param` then gives neither mean_file nor mean_value.
  DataTransformer(const TransformationParameter& param, Phase phase, const Blob<Dtype>& mean);

  // The shape a transformed datum takes: [1, channels, height', width'] (an
  // encoded one is decoded to know it).
  std::vector<int> InferBlobShape(const Datum& datum) const;

  // Writes one transformed datum into `out` (channels * height' * width'
  // values). Raw uint8 or float data, or an encoded image in builds with
  // OpenCV (without it, an encoded datum is a user error).
  void Transform(const Datum& datum, Dtype* out);
  // The same into `out`, one item of `shape` (a batch's shape; axis 0 is not
  // compared): a record that transforms to another shape is a user error (a
  // source's records share one shape). An encoded record is decoded once.
  void Transform(const Datum& datum, Dtype* out, const std::vector<int>& shape);
  // Into a blob of shape [1, C, H', W'] (or into item 0 of a larger blob).
  void Transform(const Datum& datum, Blob<Dtype>* transformed);
  // A batch of datums into a blob of shape [N, C, H', W'].
  void Transform(const std::vector<Datum>& datums, Blob<Dtype>* transformed);
  // A blob of raw values [N, C, H, W] into [N, C, H', W'].
  void Transform(Blob<Dtype>* input, Blob<Dtype>* transformed);

#ifdef CREMA_OPENCV
  // An 8-bit image (1 or 3 channels, OpenCV's interleaved BGR) into `out`.
  void Transform(const cv::Mat& image, Dtype* out);
  // The shape an image transforms to: [1, channels, height', width'].
  std::vector<int> InferBlobShape(const cv::Mat& image) const;
#endif

  const TransformationParameter& param() const { return param_; }
  // Whether Transform draws from the thread's random stream (a mirror or a
  // training crop): a caller that seeds the stream per batch for
  // reproducibility need not when it does not.
  bool draws_random_numbers() const {
    return param_.mirror() || (param_.crop_size() > 0 && phase_ == TRAIN) || augments_;
  }

 private:
  // Where the crop starts and whether to mirror, drawn once per item.
  struct Choice {
    int h_off = 0;
    int w_off = 0;
    bool mirror = false;
  };
  Choice Choose(int height, int width);
  void CheckSize(int channels, int height, int width) const;
  // Refuses a transformed shape that differs from `expected` but for axis 0.
  void RequireItemShape(const std::vector<int>& shape, const std::vector<int>& expected) const;
  // The shape channels x height x width transforms to (unchecked).
  std::vector<int> OutputShape(int channels, int height, int width) const;
  // in: planes (channels x height x width). TransformValues checks the size
  // (CheckSize) first; WriteValues is for a caller that did.
  template <typename Source>
  void TransformValues(const Source* in, int channels, int height, int width, Dtype* out);
  template <typename Source>
  void WriteValues(const Source* in, int channels, int height, int width, Dtype* out);
  int Rand(int n);
  // The TRAIN path with augmentations: the window (cropped, or warped by
  // WarpSource into augment_window_), colour jitter, mirror, mean and scale,
  // then random erasing.
  template <typename Source>
  void TransformAugmented(const Source* in, int channels, int height, int width, Dtype* out);
  template <typename Source>
  void WarpSource(const Source* in, int channels, int height, int width, const Choice& choice);
  Dtype MeanValue(int channel) const;
  // A mean image (a mean file's or one given in memory) is one image.
  void RequireMeanImage() const;
  // out (channels x out_h x out_w) = (row - mean) * scale, each row mirrored
  // as chosen: row_at(c, h) points at output row h's source values; a mean
  // file's rows are read at the choice's place in the height x width image.
  template <typename RowAt>
  void WriteRows(const RowAt& row_at, int channels, int height, int width, int out_h, int out_w,
                 const Choice& choice, Dtype* out);
  // Whether crop_size is a random resized crop's output size rather than a
  // window of the input.
  bool resizes_crop() const { return warps_ && param_.has_random_resized_crop(); }
#ifdef CREMA_OPENCV
  cv::Mat Decode(const Datum& datum) const;
#endif

  TransformationParameter param_;
  Phase phase_;
  Blob<Dtype> data_mean_;
  std::string mean_source_;  // "the mean file F", or "the mean" (one given in memory)
  std::vector<Dtype> mean_values_;
  bool augments_ = false;  // TRAIN with any augmentation
  bool warps_ = false;     // TRAIN with a random resized crop or a rotation
  // Scratch for TransformAugmented, kept between images (one transformer
  // serves one thread).
  augment::Planes augment_source_;
  augment::Planes augment_window_;
};

}  // namespace crema

#endif  // CREMA_DATA_TRANSFORMER_HPP_
