// What the cuDNN layers' tests share (GPU mode, float and double): runs a
// cuDNN layer and its reference twin (the CUDA body) on the same bottoms,
// parameters and top gradients, and expects the same tops, bottom gradients,
// accumulated parameter gradients and parameter values (BatchNorm's running
// statistics change in Forward). Every test skips where no CUDA device is.
#ifndef CREMA_TESTS_CUDNN_CUDNN_REFERENCE_CHECK_HPP_
#define CREMA_TESTS_CUDNN_CUDNN_REFERENCE_CHECK_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layer.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"

namespace crema {

// Typed over float and double; runs the test thread in GPU mode.
template <typename Dtype>
class CudnnLayerTest : public GpuTest {};

using CudnnDtypes = ::testing::Types<float, double>;

struct CudnnCheck {
  CudnnCheck(std::string layer_text, std::vector<std::vector<int>> shapes)
      : layer(std::move(layer_text)), bottom_shapes(std::move(shapes)) {}

  std::string layer;                            // the LayerParameter, as prototxt
  std::vector<std::vector<int>> bottom_shapes;  // one per bottom
  bool in_place = false;                        // top 0 is bottom 0
  bool expect_cudnn = true;                     // false: the shape runs the CUDA body
  int tops = 1;                                 // tops out of place
  // Relative to 1 + |reference value|; for float (double gets 1e-4 of it).
  double tolerance = 1e-4;
  // Fills each bottom (Gaussian values by default).
  std::function<void(Blob<float>*)> fill_float;
  std::function<void(Blob<double>*)> fill_double;
  // Runs between Forward and Backward on both layers' top 0 (a later layer
  // changing the top in place, say).
  std::function<void(Blob<float>*)> after_forward_float;
  std::function<void(Blob<double>*)> after_forward_double;
  // Forward passes before the checked one (running statistics accumulate).
  int extra_forwards = 0;
  // Values for the leading parameter blobs (BatchNorm's statistics, say),
  // given to both layers after SetUp.
  std::vector<std::vector<double>> parameters;
};

template <typename Dtype>
void GaussianFill(Blob<Dtype>* blob, Dtype std) {
  FillerParameter param;
  param.set_type("gaussian");
  param.set_std(std);
  GetFiller<Dtype>(param)->Fill(blob);
}

// Distinct values (a shuffled 0.1-spaced ramp): no window of a max pooling
// holds a tie.
template <typename Dtype>
void DistinctFill(Blob<Dtype>* blob, unsigned seed) {
  std::vector<int> order(blob->count());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  for (int i = 0; i < blob->count(); ++i) {
    blob->mutable_cpu_data()[i] = Dtype(0.1) * order[i] - Dtype(0.05) * blob->count();
  }
}

template <typename Dtype>
void ExpectCloseValues(const Dtype* reference, const Dtype* cudnn, int count, double tolerance,
                       const std::string& what) {
  int worst = -1;
  double worst_excess = 0;
  for (int i = 0; i < count; ++i) {
    const double excess =
        std::fabs(double(reference[i]) - cudnn[i]) - tolerance * (1 + std::fabs(reference[i]));
    if (!(excess <= worst_excess)) {  // also catches NaN
      worst = i;
      worst_excess = excess;
    }
  }
  EXPECT_EQ(worst, -1) << what << ": element " << worst << " is " << cudnn[std::max(worst, 0)]
                       << ", the reference " << reference[std::max(worst, 0)];
}

template <typename Dtype>
const std::function<void(Blob<Dtype>*)>& FillOf(const CudnnCheck& check);
template <>
inline const std::function<void(Blob<float>*)>& FillOf<float>(const CudnnCheck& check) {
  return check.fill_float;
}
template <>
inline const std::function<void(Blob<double>*)>& FillOf<double>(const CudnnCheck& check) {
  return check.fill_double;
}
template <typename Dtype>
const std::function<void(Blob<Dtype>*)>& AfterForwardOf(const CudnnCheck& check);
template <>
inline const std::function<void(Blob<float>*)>& AfterForwardOf<float>(const CudnnCheck& check) {
  return check.after_forward_float;
}
template <>
inline const std::function<void(Blob<double>*)>& AfterForwardOf<double>(const CudnnCheck& check) {
  return check.after_forward_double;
}

// The two layers' bottoms and tops, filled alike.
template <typename Dtype>
struct TwinBlobs {
  std::vector<std::unique_ptr<Blob<Dtype>>> owned;
  std::vector<Blob<Dtype>*> ref_bottom, cudnn_bottom, ref_top, cudnn_top;

  explicit TwinBlobs(const CudnnCheck& check) {
    for (const std::vector<int>& shape : check.bottom_shapes) {
      Blob<Dtype>* ref = Own(shape);
      if (FillOf<Dtype>(check)) {
        FillOf<Dtype>(check)(ref);
      } else {
        GaussianFill(ref, Dtype(1));
      }
      Blob<Dtype>* cudnn = Own(shape);
      cudnn->CopyFrom(*ref);
      ref_bottom.push_back(ref);
      cudnn_bottom.push_back(cudnn);
    }
    if (check.in_place) {
      ref_top.push_back(ref_bottom[0]);
      cudnn_top.push_back(cudnn_bottom[0]);
      return;
    }
    for (int t = 0; t < check.tops; ++t) {
      ref_top.push_back(Own({}));
      cudnn_top.push_back(Own({}));
    }
  }
  Blob<Dtype>* Own(const std::vector<int>& shape) {
    owned.emplace_back(new Blob<Dtype>(shape));
    return owned.back().get();
  }
};

template <template <typename> class Reference, template <typename> class Cudnn, typename Dtype>
void ExpectCudnnMatchesReference(const CudnnCheck& check) {
  SCOPED_TRACE(check.layer);
  const double tolerance =
      std::is_same<Dtype, float>::value ? check.tolerance : 1e-4 * check.tolerance;
  LayerParameter param;
  ReadProtoFromString(check.layer, "layer", &param);
  Context::set_random_seed(5);
  TwinBlobs<Dtype> blobs(check);
  Reference<Dtype> reference(param);
  Cudnn<Dtype> cudnn(param);
  reference.SetUp(blobs.ref_bottom, blobs.ref_top);
  cudnn.SetUp(blobs.cudnn_bottom, blobs.cudnn_top);
  EXPECT_EQ(cudnn.uses_cudnn(), check.expect_cudnn);
  ASSERT_EQ(reference.blobs().size(), cudnn.blobs().size());
  ASSERT_LE(check.parameters.size(), reference.blobs().size());
  for (size_t b = 0; b < reference.blobs().size(); ++b) {
    Blob<Dtype>& blob = *reference.blobs()[b];
    if (b < check.parameters.size()) {
      ASSERT_EQ(check.parameters[b].size(), static_cast<size_t>(blob.count()));
      std::copy(check.parameters[b].begin(), check.parameters[b].end(), blob.mutable_cpu_data());
    }
    // Parameter gradients accumulate: both start from the same diff, as large
    // as the gradients, so that one overwritten shows.
    for (int k = 0; k < blob.count(); ++k) blob.mutable_cpu_diff()[k] = Dtype(1 + k % 7);
    cudnn.blobs()[b]->CopyFrom(blob);
    cudnn.blobs()[b]->CopyFrom(blob, true);
  }

  for (int pass = 0; pass <= check.extra_forwards; ++pass) {
    if (pass > 0 && check.in_place) {  // in place, Forward overwrote the bottoms
      for (size_t i = 0; i < blobs.ref_bottom.size(); ++i) {
        GaussianFill(blobs.ref_bottom[i], Dtype(1));
        blobs.cudnn_bottom[i]->CopyFrom(*blobs.ref_bottom[i]);
      }
    }
    reference.Forward(blobs.ref_bottom, blobs.ref_top);
    cudnn.Forward(blobs.cudnn_bottom, blobs.cudnn_top);
  }
  for (size_t t = 0; t < blobs.ref_top.size(); ++t) {
    ASSERT_EQ(blobs.ref_top[t]->shape(), blobs.cudnn_top[t]->shape());
    ExpectCloseValues(blobs.ref_top[t]->cpu_data(), blobs.cudnn_top[t]->cpu_data(),
                      blobs.ref_top[t]->count(), tolerance, "top " + std::to_string(t));
  }
  if (AfterForwardOf<Dtype>(check)) {
    AfterForwardOf<Dtype>(check)(blobs.ref_top[0]);
    AfterForwardOf<Dtype>(check)(blobs.cudnn_top[0]);
  }

  for (size_t t = 0; t < blobs.ref_top.size(); ++t) {
    Blob<Dtype> top_diff(blobs.ref_top[t]->shape());
    GaussianFill(&top_diff, Dtype(1));
    std::copy_n(top_diff.cpu_data(), top_diff.count(), blobs.ref_top[t]->mutable_cpu_diff());
    std::copy_n(top_diff.cpu_data(), top_diff.count(), blobs.cudnn_top[t]->mutable_cpu_diff());
  }
  // Bottom gradients are overwritten: both start from the same garbage.
  if (!check.in_place) {
    for (size_t i = 0; i < blobs.ref_bottom.size(); ++i) {
      for (Blob<Dtype>* bottom : {blobs.ref_bottom[i], blobs.cudnn_bottom[i]}) {
        for (int k = 0; k < bottom->count(); ++k) bottom->mutable_cpu_diff()[k] = Dtype(3 + k % 5);
      }
    }
  }
  const std::vector<bool> propagate(blobs.ref_bottom.size(), true);
  reference.Backward(blobs.ref_top, propagate, blobs.ref_bottom);
  cudnn.Backward(blobs.cudnn_top, propagate, blobs.cudnn_bottom);
  // Still on cuDNN after the passes (a convolution that finds no algorithm
  // within its workspace bound falls back at its first pass).
  EXPECT_EQ(cudnn.uses_cudnn(), check.expect_cudnn) << "after the passes";
  for (size_t i = 0; i < blobs.ref_bottom.size(); ++i) {
    ExpectCloseValues(blobs.ref_bottom[i]->cpu_diff(), blobs.cudnn_bottom[i]->cpu_diff(),
                      blobs.ref_bottom[i]->count(), tolerance,
                      "bottom " + std::to_string(i) + " gradient");
  }
  for (size_t b = 0; b < reference.blobs().size(); ++b) {
    const Blob<Dtype>& want = *reference.blobs()[b];
    const Blob<Dtype>& got = *cudnn.blobs()[b];
    // Parameter gradients sum over the batch: a looser bound.
    ExpectCloseValues(want.cpu_diff(), got.cpu_diff(), want.count(), 10 * tolerance,
                      "parameter " + std::to_string(b) + " gradient");
    ExpectCloseValues(want.cpu_data(), got.cpu_data(), want.count(), tolerance,
                      "parameter " + std::to_string(b));
  }
}

}  // namespace crema

#endif  // CREMA_TESTS_CUDNN_CUDNN_REFERENCE_CHECK_HPP_
