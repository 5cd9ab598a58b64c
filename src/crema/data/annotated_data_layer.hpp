// AnnotatedData (weiliu89/caffe's SSD input): reads AnnotatedDatum records
// (an image and its boxes) through the shared DataReader like Data, and
// serves each batch's images with their boxes, prefetched on its own thread
// and resumable at the same position. Per image, in the fork's order:
// distort_param, expand_param, one window drawn from the batch_samplers'
// (the whole image when none qualifies), resize_param, mirror; then the
// mean and scale. Every step that moves pixels moves the boxes with them.
//
// Tops: data [N, C, H, W]; label [1, 1, boxes, 8], one row per box that
// survives: (item, group_label, instance_id, xmin, ymin, xmax, ymax,
// difficult), coordinates in [0, 1]; a batch without boxes has one row of
// -1s. A resumed run draws every batch's random choices as the
// uninterrupted run did (the generator is seeded per batch).
#ifndef CREMA_DATA_ANNOTATED_DATA_LAYER_HPP_
#define CREMA_DATA_ANNOTATED_DATA_LAYER_HPP_

#include <vector>

#include "crema/data/data_layer.hpp"

namespace crema {

template <typename Dtype>
class AnnotatedDataLayer : public DataLayer<Dtype> {
 public:
  // Refuses settings it would not apply (crop_size, FIT_SMALL_SIZE, a
  // resize probability below 1, a bad sampler) naming the layer.
  explicit AnnotatedDataLayer(const LayerParameter& param);
  // The prefetch thread reads augmentation_: stopped before it goes.
  ~AnnotatedDataLayer() override;
  void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "AnnotatedData"; }

 protected:
  void load_batch(Batch<Dtype>* batch) override;

 private:
  // The SSD steps and the mirror, which AnnotatedData applies itself with
  // the boxes; the plain transformer gets the rest (mean, scale, colour).
  TransformationParameter augmentation_;
};

}  // namespace crema

#endif  // CREMA_DATA_ANNOTATED_DATA_LAYER_HPP_
