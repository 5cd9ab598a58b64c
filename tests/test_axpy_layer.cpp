// Axpy: top = a * x + y with a per image and channel. Forward and backward
// values by hand, gradients of all three bottoms against finite differences,
// the top in place on y, refusals of mismatched shapes, every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/layers/axpy_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class AxpyLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // a = [2, -1] for one image of two channels of two values each.
  AxpyLayerTest() : a_(std::vector<int>{1, 2, 1, 1}), x_(1, 2, 1, 2), y_(1, 2, 1, 2) {
    SetValues(&a_, {2, -1});
    SetValues(&x_, {1, 2, 3, 4});
    SetValues(&y_, {10, 20, 30, 40});
  }

  std::vector<Blob<Dtype>*> Bottoms() { return {&a_, &x_, &y_}; }

  Blob<Dtype> a_, x_, y_, top_;
};
TYPED_TEST_SUITE(AxpyLayerTest, TestDtypesAndDevices);

LayerParameter AxpyParam() {
  LayerParameter param;
  param.set_name("axpy1");
  param.set_type("Axpy");
  return param;
}

template <typename Dtype>
std::vector<Dtype> Values(const Blob<Dtype>& blob, bool diff = false) {
  const Dtype* begin = diff ? blob.cpu_diff() : blob.cpu_data();
  return std::vector<Dtype>(begin, begin + blob.count());
}

TYPED_TEST(AxpyLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  AxpyLayer<Dtype> layer(AxpyParam());
  std::vector<Blob<Dtype>*> top_vec{&this->top_};
  layer.SetUp(this->Bottoms(), top_vec);
  layer.Forward(this->Bottoms(), top_vec);
  EXPECT_EQ(this->top_.shape(), this->x_.shape());
  // 2 * [1, 2] + [10, 20], -1 * [3, 4] + [30, 40].
  EXPECT_EQ(Values(this->top_), (std::vector<Dtype>{12, 24, 27, 36}));
}

TYPED_TEST(AxpyLayerTest, ForwardWithTwoAxisScale) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(std::vector<int>{1, 2});
  SetValues(&a, {2, -1});
  AxpyLayer<Dtype> layer(AxpyParam());
  std::vector<Blob<Dtype>*> bottom_vec{&a, &this->x_, &this->y_}, top_vec{&this->top_};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(Values(this->top_), (std::vector<Dtype>{12, 24, 27, 36}));
}

TYPED_TEST(AxpyLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  AxpyLayer<Dtype> layer(AxpyParam());
  std::vector<Blob<Dtype>*> top_vec{&this->top_};
  layer.SetUp(this->Bottoms(), top_vec);
  layer.Forward(this->Bottoms(), top_vec);
  const std::vector<Dtype> top_diff{1, -1, 2, 0.5};
  std::copy(top_diff.begin(), top_diff.end(), this->top_.mutable_cpu_diff());
  layer.Backward(top_vec, std::vector<bool>{true, true, true}, this->Bottoms());
  // da = [1 * 1 + 2 * -1, 3 * 2 + 4 * 0.5]; dx = a * dtop; dy = dtop.
  EXPECT_EQ(Values(this->a_, true), (std::vector<Dtype>{-1, 8}));
  EXPECT_EQ(Values(this->x_, true), (std::vector<Dtype>{2, -2, -2, -0.5}));
  EXPECT_EQ(Values(this->y_, true), top_diff);
}

TYPED_TEST(AxpyLayerTest, BackwardOnlyWhereAsked) {
  using Dtype = typename TypeParam::Dtype;
  AxpyLayer<Dtype> layer(AxpyParam());
  std::vector<Blob<Dtype>*> top_vec{&this->top_};
  layer.SetUp(this->Bottoms(), top_vec);
  layer.Forward(this->Bottoms(), top_vec);
  cpu_set(this->top_.count(), Dtype(1), this->top_.mutable_cpu_diff());
  for (Blob<Dtype>* blob : this->Bottoms()) {
    cpu_set(blob->count(), Dtype(9), blob->mutable_cpu_diff());
  }
  layer.Backward(top_vec, std::vector<bool>{true, false, false}, this->Bottoms());
  EXPECT_EQ(Values(this->a_, true), (std::vector<Dtype>{3, 7}));  // 1 + 2, 3 + 4
  EXPECT_EQ(Values(this->x_, true), (std::vector<Dtype>{9, 9, 9, 9}));
  EXPECT_EQ(Values(this->y_, true), (std::vector<Dtype>{9, 9, 9, 9}));
}

TYPED_TEST(AxpyLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  Blob<Dtype> a(2, 3, 1, 1), x(2, 3, 2, 3), y(2, 3, 2, 3), top;
  for (Blob<Dtype>* blob : {&a, &x, &y}) FillGaussian(blob);
  std::vector<Blob<Dtype>*> bottom_vec{&a, &x, &y}, top_vec{&top};
  AxpyLayer<Dtype> layer(AxpyParam());
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
}

TYPED_TEST(AxpyLayerTest, InPlaceOnYMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  Blob<Dtype> a(2, 3, 1, 1), x(2, 3, 2, 3), y(2, 3, 2, 3), top, shared, top_diff(2, 3, 2, 3);
  for (Blob<Dtype>* blob : {&a, &x, &y, &top_diff}) FillGaussian(blob);
  shared.CopyFrom(y, false, true);
  std::vector<Blob<Dtype>*> out_of_place_bottoms{&a, &x, &y}, top_vec{&top};
  std::vector<Blob<Dtype>*> in_place_bottoms{&a, &x, &shared}, shared_vec{&shared};
  const std::vector<bool> all{true, true, true};

  AxpyLayer<Dtype> out_of_place(AxpyParam()), in_place(AxpyParam());
  out_of_place.SetUp(out_of_place_bottoms, top_vec);
  out_of_place.Forward(out_of_place_bottoms, top_vec);
  cpu_copy(top.count(), top_diff.cpu_data(), top.mutable_cpu_diff());
  out_of_place.Backward(top_vec, all, out_of_place_bottoms);
  const std::vector<Dtype> a_diff = Values(a, true), x_diff = Values(x, true);

  in_place.SetUp(in_place_bottoms, shared_vec);
  in_place.Forward(in_place_bottoms, shared_vec);
  EXPECT_EQ(Values(shared), Values(top));
  cpu_copy(shared.count(), top_diff.cpu_data(), shared.mutable_cpu_diff());
  in_place.Backward(shared_vec, all, in_place_bottoms);
  EXPECT_EQ(Values(a, true), a_diff);
  EXPECT_EQ(Values(x, true), x_diff);
  EXPECT_EQ(Values(shared, true), Values(y, true));
}

TYPED_TEST(AxpyLayerTest, ScaleOfWrongChannelsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(std::vector<int>{1, 3});
  AxpyLayer<Dtype> layer(AxpyParam());
  ExpectSetUpError<Dtype>(&layer, {&a, &this->x_, &this->y_}, {&this->top_},
                          "bottom 0 (a) has shape 1 3 (3)");
}

TYPED_TEST(AxpyLayerTest, ScaleWithSpatialExtentRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(1, 2, 1, 2);
  AxpyLayer<Dtype> layer(AxpyParam());
  ExpectSetUpError<Dtype>(&layer, {&a, &this->x_, &this->y_}, {&this->top_},
                          "it must be [N, C] or [N, C, 1, 1]");
}

TYPED_TEST(AxpyLayerTest, ScaleOfWrongBatchRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(std::vector<int>{2, 2});
  AxpyLayer<Dtype> layer(AxpyParam());
  ExpectSetUpError<Dtype>(&layer, {&a, &this->x_, &this->y_}, {&this->top_}, "bottom 0 (a)");
}

TYPED_TEST(AxpyLayerTest, YOfOtherShapeRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> y(1, 2, 2, 1);
  AxpyLayer<Dtype> layer(AxpyParam());
  ExpectSetUpError<Dtype>(&layer, {&this->a_, &this->x_, &y}, {&this->top_},
                          "it must have bottom 1 (x)'s shape");
}

TYPED_TEST(AxpyLayerTest, XWithoutChannelAxisRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{4}), y(std::vector<int>{4});
  AxpyLayer<Dtype> layer(AxpyParam());
  ExpectSetUpError<Dtype>(&layer, {&this->a_, &x, &y}, {&this->top_}, "needs a channel axis");
}

TYPED_TEST(AxpyLayerTest, TopOnXRefused) {
  using Dtype = typename TypeParam::Dtype;
  AxpyLayer<Dtype> layer(AxpyParam());
  ExpectSetUpError<Dtype>(&layer, this->Bottoms(), {&this->x_}, "may share only bottom 2");
}

TYPED_TEST(AxpyLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(AxpyParam())->type(), "Axpy");
}

}  // namespace
}  // namespace crema
