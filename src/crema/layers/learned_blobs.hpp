// Set-up the layers that learn blobs share: the weights and bias of
// InnerProduct and Embed, and the blob of Bias and Scale that spans some of
// the bottom's axes. Trained blobs that came with the parameter are kept
// when their shape fits (legacy V1 models pad them to 4-D with leading axes
// of size 1: the same values); otherwise they are made and filled. A
// setting or a trained shape that does not fit is an error naming the layer.
#ifndef CREMA_LAYERS_LEARNED_BLOBS_HPP_
#define CREMA_LAYERS_LEARNED_BLOBS_HPP_

#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layer.hpp"

namespace crema {

// The weights (weight_shape) and, with bias_term, a bias of num_output
// values: blobs 0 and 1 of `layer`.
template <typename Dtype>
void SetUpWeightsAndBias(Layer<Dtype>* layer, const std::vector<int>& weight_shape, bool bias_term,
                         int num_output, const FillerParameter& weight_filler,
                         const FillerParameter& bias_filler) {
  const std::vector<int> bias_shape{num_output};
  const size_t num_blobs = bias_term ? 2 : 1;
  auto& blobs = layer->blobs();
  const auto where = [&] {
    return "layer '" + layer->layer_param().name() + "' (" + layer->type() + "): ";
  };
  if (!blobs.empty()) {
    CREMA_REQUIRE(blobs.size() == num_blobs,
                  where() << "expects " << num_blobs << " learnable blobs (weights"
                          << (bias_term ? " and bias" : "") << "), found " << blobs.size());
    const std::vector<int>* shapes[] = {&weight_shape, &bias_shape};
    const char* names[] = {"weights", "bias"};
    for (size_t b = 0; b < num_blobs; ++b) {
      CREMA_REQUIRE(SameShapeButLeadingOnes(blobs[b]->shape(), *shapes[b]),
                    where() << "trained " << names[b] << " have the wrong shape: expected "
                            << ShapeString(*shapes[b]) << ", found " << blobs[b]->shape_string());
      blobs[b]->Reshape(*shapes[b]);
    }
  } else {
    blobs.emplace_back(new Blob<Dtype>(weight_shape));
    GetFiller<Dtype>(weight_filler)->Fill(blobs[0].get());
    if (bias_term) {
      blobs.emplace_back(new Blob<Dtype>(bias_shape));
      GetFiller<Dtype>(bias_filler)->Fill(blobs[1].get());
    }
  }
}

// The shape of a blob over bottom's axes [axis, axis + num_axes) (num_axes
// -1: to the last axis), as Bias and Scale learn it.
template <typename Dtype>
std::vector<int> AxesShape(const Layer<Dtype>& layer, const Blob<Dtype>& bottom, int axis,
                           int num_axes) {
  const std::string where = "layer '" + layer.layer_param().name() + "' (" + layer.type() + "): ";
  const int bottom_axes = bottom.num_axes();
  CREMA_REQUIRE(axis >= -bottom_axes && axis < bottom_axes,
                where << "axis " << axis << " is out of range for bottom[0] of shape "
                      << bottom.shape_string());
  const int first = bottom.CanonicalAxisIndex(axis);
  CREMA_REQUIRE(
      num_axes >= -1,
      where << "num_axes must be -1 (to the last axis) or non-negative, got " << num_axes);
  const int end = num_axes == -1 ? bottom_axes : first + num_axes;
  CREMA_REQUIRE(end <= bottom_axes, where << "axis " << first << " with num_axes " << num_axes
                                          << " runs past the last axis of bottom[0] of shape "
                                          << bottom.shape_string());
  return std::vector<int>(bottom.shape().begin() + first, bottom.shape().begin() + end);
}

}  // namespace crema

#endif  // CREMA_LAYERS_LEARNED_BLOBS_HPP_
