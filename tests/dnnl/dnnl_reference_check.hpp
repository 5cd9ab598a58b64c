// What the oneDNN layers' tests share: runs a oneDNN layer and its reference
// twin on the same bottoms, parameters and top gradients, and expects the
// same tops, bottom gradients, (accumulated) parameter gradients and
// parameter values (BatchNorm's running statistics change in Forward).
#ifndef CREMA_TESTS_DNNL_DNNL_REFERENCE_CHECK_HPP_
#define CREMA_TESTS_DNNL_DNNL_REFERENCE_CHECK_HPP_

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
#include "crema/layer_bodies.hpp"
#include "crema/util/io.hpp"

namespace crema {

// param with its engine set (SetEngine: the field its type's body list
// reads), so that a twin made from it directly
// behaves as the net would make it for that engine.
inline LayerParameter WithEngine(LayerParameter param, Engine engine) {
  SetEngine(&param, engine);
  EXPECT_EQ(EngineOf(param), engine) << param.type();
  return param;
}

// The largest absolute difference between two arrays of `count` values.
inline float MaxDifference(const float* a, const float* b, int count) {
  float worst = 0;
  for (int i = 0; i < count; ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

struct DnnlCheck {
  DnnlCheck(std::string layer_text, std::vector<std::vector<int>> shapes)
      : layer(std::move(layer_text)), bottom_shapes(std::move(shapes)) {}

  std::string layer;                            // the LayerParameter, as prototxt
  std::vector<std::vector<int>> bottom_shapes;  // one per bottom
  bool in_place = false;                        // top 0 is bottom 0
  bool expect_dnnl = true;                      // false: the shape falls back
  float tolerance = 1e-4f;                      // relative to 1 + |reference value|
  // Runs on the reference layer after SetUp, before its blobs are copied
  // (to give BatchNorm running statistics, say).
  std::function<void(Layer<float>*)> prepare;
};

inline void GaussianFill(Blob<float>* blob, float std) {
  FillerParameter param;
  param.set_type("gaussian");
  param.set_std(std);
  GetFiller<float>(param)->Fill(blob);
}

// Distinct values (a shuffled 0.1-spaced ramp): no window of a max pooling
// holds a near-tie that a finite-difference step could flip.
inline void SpreadFill(Blob<float>* blob, unsigned seed) {
  std::vector<int> order(blob->count());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  for (int i = 0; i < blob->count(); ++i) {
    blob->mutable_cpu_data()[i] = 0.1f * order[i] - 0.05f * blob->count();
  }
}

inline void ExpectClose(const float* reference, const float* dnnl, int count, float tolerance,
                        const std::string& what) {
  int worst = -1;
  float worst_excess = 0;
  for (int i = 0; i < count; ++i) {
    const float excess =
        std::fabs(reference[i] - dnnl[i]) - tolerance * (1 + std::fabs(reference[i]));
    if (!(excess <= worst_excess)) {  // also catches NaN
      worst = i;
      worst_excess = excess;
    }
  }
  EXPECT_EQ(worst, -1) << what << ": element " << worst << " is " << dnnl[std::max(worst, 0)]
                       << ", the reference " << reference[std::max(worst, 0)];
}

template <template <typename> class Reference, template <typename> class Dnnl>
void ExpectDnnlMatchesReference(const DnnlCheck& check) {
  SCOPED_TRACE(check.layer);
  LayerParameter param;
  ReadProtoFromString(check.layer, "layer", &param);
  Context::set_random_seed(5);
  // Each layer gets its own bottoms (Backward writes their diffs; in place,
  // Forward writes their data), filled alike.
  std::vector<std::unique_ptr<Blob<float>>> blobs;
  std::vector<Blob<float>*> ref_bottom, dnnl_bottom, ref_top, dnnl_top;
  for (const std::vector<int>& shape : check.bottom_shapes) {
    blobs.emplace_back(new Blob<float>(shape));
    GaussianFill(blobs.back().get(), 1.0f);
    ref_bottom.push_back(blobs.back().get());
    blobs.emplace_back(new Blob<float>(shape));
    blobs.back()->CopyFrom(*ref_bottom.back());
    dnnl_bottom.push_back(blobs.back().get());
  }
  if (check.in_place) {
    ref_top.push_back(ref_bottom[0]);
    dnnl_top.push_back(dnnl_bottom[0]);
  } else {
    for (auto* tops : {&ref_top, &dnnl_top}) {
      blobs.emplace_back(new Blob<float>());
      tops->push_back(blobs.back().get());
    }
  }
  Reference<float> reference(param);
  Dnnl<float> dnnl(WithEngine(param, Engine::kDnnl));
  reference.SetUp(ref_bottom, ref_top);
  dnnl.SetUp(dnnl_bottom, dnnl_top);
  EXPECT_EQ(dnnl.uses_dnnl(), check.expect_dnnl);
  if (check.prepare) check.prepare(&reference);
  ASSERT_EQ(reference.blobs().size(), dnnl.blobs().size());
  for (size_t b = 0; b < reference.blobs().size(); ++b) {
    // Parameter gradients accumulate: both start from the same non-zero diff.
    Blob<float>& blob = *reference.blobs()[b];
    for (int k = 0; k < blob.count(); ++k) blob.mutable_cpu_diff()[k] = 0.01f * (k % 7);
    dnnl.blobs()[b]->CopyFrom(blob);
    dnnl.blobs()[b]->CopyFrom(blob, true);
  }

  reference.Forward(ref_bottom, ref_top);
  dnnl.Forward(dnnl_bottom, dnnl_top);
  ASSERT_EQ(ref_top[0]->shape(), dnnl_top[0]->shape());
  ExpectClose(ref_top[0]->cpu_data(), dnnl_top[0]->cpu_data(), ref_top[0]->count(), check.tolerance,
              "top");

  Blob<float> top_diff(ref_top[0]->shape());
  GaussianFill(&top_diff, 1.0f);
  std::copy_n(top_diff.cpu_data(), top_diff.count(), ref_top[0]->mutable_cpu_diff());
  std::copy_n(top_diff.cpu_data(), top_diff.count(), dnnl_top[0]->mutable_cpu_diff());
  const std::vector<bool> propagate(ref_bottom.size(), true);
  reference.Backward(ref_top, propagate, ref_bottom);
  dnnl.Backward(dnnl_top, propagate, dnnl_bottom);
  for (size_t i = 0; i < ref_bottom.size(); ++i) {
    ExpectClose(ref_bottom[i]->cpu_diff(), dnnl_bottom[i]->cpu_diff(), ref_bottom[i]->count(),
                check.tolerance, "bottom " + std::to_string(i) + " gradient");
  }
  for (size_t b = 0; b < reference.blobs().size(); ++b) {
    const Blob<float>& want = *reference.blobs()[b];
    const Blob<float>& got = *dnnl.blobs()[b];
    // Parameter gradients sum over the batch: a looser bound.
    ExpectClose(want.cpu_diff(), got.cpu_diff(), want.count(), 10 * check.tolerance,
                "parameter " + std::to_string(b) + " gradient");
    ExpectClose(want.cpu_data(), got.cpu_data(), want.count(), check.tolerance,
                "parameter " + std::to_string(b));
  }
}

// The bf16 switch: the same layer (`layer_text`) with compute_precision BF16
// runs bf16 kernels, its top differing from the FLOAT layer's by bf16's
// rounding only. On CPUs with bf16 kernels only.
template <template <typename> class Dnnl>
void ExpectBf16SwitchChangesTheKernelsOnly(const std::string& layer_text,
                                           const std::vector<int>& bottom_shape) {
  Blob<float> bottom(bottom_shape), float_top, bf16_top;
  GaussianFill(&bottom, 1.0f);
  LayerParameter param;
  ReadProtoFromString(layer_text, "layer", &param);
  param = WithEngine(param, Engine::kDnnl);
  std::vector<Blob<float>*> bottom_vec{&bottom}, float_vec{&float_top}, bf16_vec{&bf16_top};
  Dnnl<float> float_layer(param);
  param.set_compute_precision(BF16);
  Dnnl<float> bf16_layer(param);
  float_layer.SetUp(bottom_vec, float_vec);
  bf16_layer.SetUp(bottom_vec, bf16_vec);
  for (size_t b = 0; b < float_layer.blobs().size(); ++b) {
    bf16_layer.blobs()[b]->CopyFrom(*float_layer.blobs()[b]);
  }
  EXPECT_FALSE(float_layer.uses_bf16());
  EXPECT_TRUE(bf16_layer.uses_bf16());
  float_layer.Forward(bottom_vec, float_vec);
  bf16_layer.Forward(bottom_vec, bf16_vec);
  const float difference =
      MaxDifference(float_top.cpu_data(), bf16_top.cpu_data(), float_top.count());
  EXPECT_GT(difference, 0.0f);
  EXPECT_LT(difference, 5e-2f);
}

}  // namespace crema

#endif  // CREMA_TESTS_DNNL_DNNL_REFERENCE_CHECK_HPP_
