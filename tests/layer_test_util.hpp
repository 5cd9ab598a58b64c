// What the layer tests share: running a layer on a handful of values, checking
// that SetUp's errors name the layer, filling blobs, slicing the steps of a
// recurrent input, and the index arithmetic of the direct (loop-over-every-
// product) convolutions that the convolution-like layers are compared with.
#ifndef CREMA_TESTS_LAYER_TEST_UTIL_HPP_
#define CREMA_TESTS_LAYER_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/blob.hpp"
#include "crema/common.hpp"
#include "crema/filler.hpp"
#include "crema/layer.hpp"
#include "crema/layer_factory.hpp"
#include "crema/util/math_functions.hpp"

namespace crema {

// Runs the layer forward on a 1-D blob holding input and returns the output.
template <typename Dtype>
std::vector<Dtype> ForwardOnValues(Layer<Dtype>* layer, const std::vector<Dtype>& input) {
  Blob<Dtype> bottom(std::vector<int>{static_cast<int>(input.size())}), top;
  std::copy(input.begin(), input.end(), bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer->SetUp(bottom_vec, top_vec);
  layer->Forward(bottom_vec, top_vec);
  return std::vector<Dtype>(top.cpu_data(), top.cpu_data() + top.count());
}

// Runs forward then backward on a 1-D blob and returns the bottom gradient.
template <typename Dtype>
std::vector<Dtype> BackwardOnValues(Layer<Dtype>* layer, const std::vector<Dtype>& input,
                                    const std::vector<Dtype>& top_diff) {
  Blob<Dtype> bottom(std::vector<int>{static_cast<int>(input.size())}), top;
  std::copy(input.begin(), input.end(), bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  layer->SetUp(bottom_vec, top_vec);
  layer->Forward(bottom_vec, top_vec);
  std::copy(top_diff.begin(), top_diff.end(), top.mutable_cpu_diff());
  layer->Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  return std::vector<Dtype>(bottom.cpu_diff(), bottom.cpu_diff() + bottom.count());
}

// Forward and backward with top == bottom must give exactly what they give
// out of place.
template <typename Dtype>
void ExpectInPlaceMatchesOutOfPlace(const LayerParameter& param, const Blob<Dtype>& input) {
  Blob<Dtype> bottom, top, shared, top_diff;
  bottom.CopyFrom(input, false, true);
  shared.CopyFrom(input, false, true);
  top_diff.ReshapeLike(input);
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&top_diff);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top}, shared_vec{&shared};
  std::shared_ptr<Layer<Dtype>> out_of_place = LayerRegistry<Dtype>::CreateLayer(param);
  std::shared_ptr<Layer<Dtype>> in_place = LayerRegistry<Dtype>::CreateLayer(param);
  out_of_place->SetUp(bottom_vec, top_vec);
  in_place->SetUp(shared_vec, shared_vec);
  // The same seed gives random layers the same draws in both runs.
  Context::set_random_seed(1701);
  out_of_place->Forward(bottom_vec, top_vec);
  Context::set_random_seed(1701);
  in_place->Forward(shared_vec, shared_vec);
  const int count = input.count();
  for (int i = 0; i < count; ++i) EXPECT_EQ(shared.cpu_data()[i], top.cpu_data()[i]) << i;
  cpu_copy(count, top_diff.cpu_data(), top.mutable_cpu_diff());
  cpu_copy(count, top_diff.cpu_data(), shared.mutable_cpu_diff());
  out_of_place->Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  in_place->Backward(shared_vec, std::vector<bool>{true}, shared_vec);
  for (int i = 0; i < count; ++i) EXPECT_EQ(shared.cpu_diff()[i], bottom.cpu_diff()[i]) << i;
}

// SetUp must refuse the configuration with an Error naming the layer and
// its type.
template <typename Dtype>
void ExpectSetUpThrowsNamingLayer(Layer<Dtype>* layer, const std::vector<Blob<Dtype>*>& bottom,
                                  const std::vector<Blob<Dtype>*>& top) {
  ASSERT_FALSE(layer->layer_param().name().empty()) << "name the layer to check the message";
  try {
    layer->SetUp(bottom, top);
    ADD_FAILURE() << "SetUp accepted a bad configuration";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(layer->layer_param().name()), std::string::npos) << message;
    EXPECT_NE(message.find(layer->type()), std::string::npos) << message;
  }
}

// SetUp must refuse the configuration with an Error naming the layer, its
// type and the given detail.
template <typename Dtype>
void ExpectSetUpError(Layer<Dtype>* layer, const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top, const std::string& detail) {
  try {
    layer->SetUp(bottom, top);
    ADD_FAILURE() << "SetUp must refuse this configuration (" << detail << ")";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(layer->layer_param().name()), std::string::npos) << message;
    EXPECT_NE(message.find(layer->type()), std::string::npos) << message;
    EXPECT_NE(message.find(detail), std::string::npos) << message;
  }
}

// Writes values (as many as the blob holds) into the blob's data.
template <typename Dtype>
void SetValues(Blob<Dtype>* blob, const std::vector<double>& values) {
  ASSERT_EQ(blob->count(), static_cast<int>(values.size()));
  for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = Dtype(values[i]);
}

// Fills the blob with the default Gaussian filler, from the context's RNG.
template <typename Dtype>
void FillGaussian(Blob<Dtype>* blob) {
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(blob);
}

// Steps [begin, end) of a T x N x ... blob.
template <typename Dtype>
void CopySteps(const Blob<Dtype>& source, int begin, int end, Blob<Dtype>* steps) {
  std::vector<int> shape = source.shape();
  shape[0] = end - begin;
  steps->Reshape(shape);
  const int step_count = source.count(1);
  std::copy(source.cpu_data() + begin * step_count, source.cpu_data() + end * step_count,
            steps->mutable_cpu_data());
}

// The logistic function, for the reference bodies of the LSTM tests.
inline double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// The product of the values (the element count of a shape).
inline int Product(const std::vector<int>& values) {
  int product = 1;
  for (int v : values) product *= v;
  return product;
}

// Every multi-index of shape, in row-major order.
inline std::vector<std::vector<int>> AllIndices(const std::vector<int>& shape) {
  std::vector<std::vector<int>> indices;
  std::vector<int> index(shape.size(), 0);
  for (int flat = 0; flat < Product(shape); ++flat) {
    indices.push_back(index);
    for (int axis = static_cast<int>(shape.size()) - 1; axis >= 0; --axis) {
      if (++index[axis] < shape[axis]) break;
      index[axis] = 0;
    }
  }
  return indices;
}

// A parameter as one value per axis: none means the default, one means the
// same on every axis.
inline std::vector<int> PerAxis(const std::vector<int>& values, int axes, int default_value) {
  if (values.empty()) return std::vector<int>(axes, default_value);
  if (values.size() == 1) return std::vector<int>(axes, values[0]);
  return values;
}

}  // namespace crema

#endif  // CREMA_TESTS_LAYER_TEST_UTIL_HPP_
