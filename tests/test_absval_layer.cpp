// AbsVal: forward and backward values by hand, gradients against finite
// differences (skipping the kink at 0), refusal of in-place use, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/absval_layer.hpp"
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
class AbsValLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  AbsValLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(AbsValLayerTest, TestDtypesAndDevices);

TYPED_TEST(AbsValLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  AbsValLayer<Dtype> layer(param);
  const std::vector<Dtype> top = ForwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3});
  const std::vector<Dtype> expected = {2, 0.5, 0, 0.5, 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(top[i], expected[i]) << i;
}

TYPED_TEST(AbsValLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  AbsValLayer<Dtype> layer(param);
  const std::vector<Dtype> bottom_diff =
      BackwardOnValues<Dtype>(&layer, {-2, -0.5, 0, 0.5, 3}, {1, 2, 3, 4, 5});
  const std::vector<Dtype> expected = {-1, -2, 0, 4, 5};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(bottom_diff[i], expected[i]) << i;
}

TYPED_TEST(AbsValLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  AbsValLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(AbsValLayerTest, InPlaceRefusedNamingTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("abs1");
  AbsValLayer<Dtype> layer(param);
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->bottom_vec_);
}

TYPED_TEST(AbsValLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("AbsVal");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "AbsVal");
}

}  // namespace
}  // namespace crema
