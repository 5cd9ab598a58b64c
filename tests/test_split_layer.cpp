// Split: every top holds the bottom (shared, not copied), backward sums the
// tops' gradients by hand and against finite differences, and in-place use is
// refused.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/split_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter SplitParam() {
  LayerParameter param;
  param.set_name("fork");
  param.set_type("Split");
  return param;
}

template <typename TypeParam>
class SplitLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  SplitLayerTest() : bottom_(2, 3, 2, 2) {
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(&bottom_);
    bottom_vec_ = {&bottom_};
    top_vec_ = {&tops_[0], &tops_[1], &tops_[2]};
  }
  Blob<Dtype> bottom_;
  Blob<Dtype> tops_[3];
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(SplitLayerTest, TestDtypesAndDevices);

TYPED_TEST(SplitLayerTest, EveryTopHoldsTheBottom) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(SplitParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (Blob<Dtype>* top : this->top_vec_) {
    ASSERT_EQ(top->shape(), this->bottom_.shape());
    for (int i = 0; i < top->count(); ++i)
      EXPECT_EQ(top->cpu_data()[i], this->bottom_.cpu_data()[i]);
    // Shared, as in Caffe: no copy is made.
    EXPECT_EQ(top->cpu_data(), this->bottom_.cpu_data());
  }
}

TYPED_TEST(SplitLayerTest, BackwardSumsTheTopGradients) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(SplitParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int count = this->bottom_.count();
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < count; ++i) this->tops_[t].mutable_cpu_diff()[i] = (t + 1) * i;
  }
  layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  for (int i = 0; i < count; ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], 6 * i) << i;

  // With one top the bottom's gradient is that top's.
  std::vector<Blob<Dtype>*> one_top{&this->tops_[2]};
  SplitLayer<Dtype> single(SplitParam());
  single.SetUp(this->bottom_vec_, one_top);
  single.Forward(this->bottom_vec_, one_top);
  single.Backward(one_top, std::vector<bool>{true}, this->bottom_vec_);
  for (int i = 0; i < count; ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], 3 * i) << i;
}

TYPED_TEST(SplitLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(SplitParam());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SplitLayerTest, RefusesInPlace) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(SplitParam());
  std::vector<Blob<Dtype>*> in_place{&this->tops_[0], &this->bottom_};
  try {
    layer.SetUp(this->bottom_vec_, in_place);
    FAIL() << "a top that is the bottom must be refused";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("fork"), std::string::npos) << message;
    EXPECT_NE(message.find("Split"), std::string::npos) << message;
    EXPECT_NE(message.find("in place"), std::string::npos) << message;
  }
}

TYPED_TEST(SplitLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(SplitParam())->type(), "Split");
}

}  // namespace
}  // namespace crema
