// Clip: forward and backward values by hand (the gradient passes at the bounds
// too), gradients against finite differences away from both kinks, in place,
// refusal of bad bounds, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/clip_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

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

template <typename TypeParam>
class ClipLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ClipLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ClipLayerTest, TestDtypesAndDevices);

// A Clip layer's parameters with both bounds given.
LayerParameter ClipParam(float min, float max) {
  LayerParameter param;
  param.set_name("clip1");
  param.set_type("Clip");
  param.mutable_clip_param()->set_min(min);
  param.mutable_clip_param()->set_max(max);
  return param;
}

// Moves values that lie within margin of a kink to margin past it, so the
// finite differences never straddle one.
template <typename Dtype>
void MoveAwayFromKinks(Blob<Dtype>* blob, Dtype min, Dtype max, Dtype margin) {
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) {
    for (const Dtype kink : {min, max}) {
      if (std::fabs(data[i] - kink) < margin)
        data[i] = data[i] < kink ? kink - margin : kink + margin;
    }
  }
}

TYPED_TEST(ClipLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(-1, 2));
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-3, -1, 0.5, 2, 5});
  EXPECT_EQ(top, (std::vector<Dtype>{-1, -1, 0.5, 2, 2}));
}

TYPED_TEST(ClipLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(-1, 2));
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-3, -1, 0.5, 2, 5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(bottom_diff, (std::vector<Dtype>{0, 2, 3, 4, 0}));
}

TYPED_TEST(ClipLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  MoveAwayFromKinks<Dtype>(this->bottom_.get(), -0.5, 0.8, 0.05);
  ClipLayer<Dtype> layer(ClipParam(-0.5, 0.8));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ClipLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  // In place, a clipped y lies inside the bounds: backward must use the input.
  ExpectInPlaceMatchesOutOfPlace<Dtype>(ClipParam(-0.5, 0.8), *this->bottom_);
}

TYPED_TEST(ClipLayerTest, MinAboveMaxRefused) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(1, -1));
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ClipLayerTest, MissingBoundsRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("clip2");
  ClipLayer<Dtype> layer(param);
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ClipLayerTest, EqualBoundsAccepted) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ClipParam(0.5, 0.5));
  EXPECT_EQ(ForwardOnValues<Dtype>(&layer, {-1, 0.5, 3}), (std::vector<Dtype>{0.5, 0.5, 0.5}));
}

TYPED_TEST(ClipLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Clip");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Clip");
}

}  // namespace
}  // namespace crema
