// ELU: forward values by hand for the default and another alpha, gradients
// against finite differences (skipping the kink at 0), in place, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/elu_layer.hpp"
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
class ELULayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ELULayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(ELULayerTest, TestDtypesAndDevices);

TYPED_TEST(ELULayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  const std::vector<Dtype> input = {-2, -0.5, 0, 0.5, 3};
  LayerParameter param;
  ELULayer<Dtype> layer(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, input);
  const std::vector<double> expected = {-0.8646647167633873, -0.3934693402873666, 0, 0.5, 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;

  param.mutable_elu_param()->set_alpha(0.5);
  ELULayer<Dtype> half(param);
  const std::vector<Dtype> top_half = ForwardOnValues<Dtype>(&half, input);
  const std::vector<double> expected_half = {-0.43233235838169365, -0.1967346701436833, 0, 0.5, 3};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(top_half[i], expected_half[i], 1e-6) << i;
}

TYPED_TEST(ELULayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_elu_param()->set_alpha(0.5);
  ELULayer<Dtype> layer(param);
  // dy/dx is 1 for x > 0 and alpha * e^x otherwise.
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3}, {1, 1, 1, 1, 2});
  const std::vector<double> expected = {0.06766764161830635, 0.3032653298563167, 0.5, 1, 2};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(bottom_diff[i], expected[i], 1e-6) << i;
}

TYPED_TEST(ELULayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  ELULayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ELULayerTest, GradientOtherAlpha) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_elu_param()->set_alpha(0.5);
  ELULayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ELULayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("ELU");
  param.mutable_elu_param()->set_alpha(0.7);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(param, *this->bottom_);
}

TYPED_TEST(ELULayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("elu3");
  ELULayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, two_bottoms, this->top_vec_);
}

TYPED_TEST(ELULayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("ELU");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "ELU");
}

}  // namespace
}  // namespace crema
