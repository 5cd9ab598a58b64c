// ReLU: forward values by hand, gradients against finite differences, plain
// and leaky, out of place and in place, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/relu_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ReLULayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ReLULayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ReLULayerTest, TestDtypesAndDevices);

TYPED_TEST(ReLULayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  const Dtype input[] = {-2, -0.5, 0, 0.5, 3};
  Blob<Dtype> bottom(std::vector<int>{5}), top;
  std::copy(input, input + 5, bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  ReLULayer<Dtype> relu(param);
  relu.SetUp(bottom_vec, top_vec);
  relu.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {0, 0, 0, 0.5, 3};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;

  param.mutable_relu_param()->set_negative_slope(0.1);
  ReLULayer<Dtype> leaky(param);
  leaky.SetUp(bottom_vec, top_vec);
  leaky.Forward(bottom_vec, top_vec);
  const Dtype expected_leaky[] = {-0.2, -0.05, 0, 0.5, 3};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(top.cpu_data()[i], expected_leaky[i], 1e-6) << i;
}

TYPED_TEST(ReLULayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  ReLULayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ReLULayerTest, GradientLeaky) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_relu_param()->set_negative_slope(0.01);
  ReLULayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ReLULayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_relu_param()->set_negative_slope(0.2);
  ReLULayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> in_place;
  in_place.CopyFrom(*this->bottom_, false, true);
  std::vector<Blob<Dtype>*> in_place_vec{&in_place};
  ReLULayer<Dtype> layer_in_place(param);
  layer_in_place.SetUp(in_place_vec, in_place_vec);
  layer_in_place.Forward(in_place_vec, in_place_vec);
  for (int i = 0; i < in_place.count(); ++i) {
    EXPECT_EQ(in_place.cpu_data()[i], this->top_->cpu_data()[i]);
  }
}

TYPED_TEST(ReLULayerTest, WrongBlobCountNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("relu7");
  ReLULayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> two_bottoms{this->bottom_.get(), this->bottom_.get()};
  try {
    layer.SetUp(two_bottoms, this->top_vec_);
    FAIL() << "two bottoms must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("relu7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ReLU"), std::string::npos) << e.what();
  }
}

TYPED_TEST(ReLULayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("ReLU");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "ReLU");
  param.set_type("ReLu");
  EXPECT_THROW(LayerRegistry<Dtype>::CreateLayer(param), Error);
}

}  // namespace
}  // namespace crema
