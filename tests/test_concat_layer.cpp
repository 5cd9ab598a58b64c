// Concat: values along axes 0 and 1 (and the legacy concat_dim), a single
// bottom passed through, gradients along both axes, propagate_down, and the
// shapes and parameters it refuses.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/concat_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// A blob of the given shape holding first, first + 1, ...
template <typename Dtype>
std::unique_ptr<Blob<Dtype>> Counting(const std::vector<int>& shape, Dtype first) {
  std::unique_ptr<Blob<Dtype>> blob(new Blob<Dtype>(shape));
  for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = first + i;
  return blob;
}

LayerParameter ConcatParam(int axis) {
  LayerParameter param;
  param.set_name("join");
  param.set_type("Concat");
  param.mutable_concat_param()->set_axis(axis);
  return param;
}

template <typename TypeParam>
class ConcatLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  void Run(const LayerParameter& param, const std::vector<Blob<Dtype>*>& bottom) {
    top_vec_ = {&top_};
    ConcatLayer<Dtype> layer(param);
    layer.SetUp(bottom, top_vec_);
    layer.Forward(bottom, top_vec_);
  }
  void ExpectTop(const std::vector<int>& shape, const std::vector<Dtype>& values) {
    ASSERT_EQ(top_.shape(), shape);
    for (int i = 0; i < top_.count(); ++i) EXPECT_EQ(top_.cpu_data()[i], values[i]) << i;
  }
  Blob<Dtype> top_;
  std::vector<Blob<Dtype>*> top_vec_;
};
TYPED_TEST_SUITE(ConcatLayerTest, TestDtypesAndDevices);

TYPED_TEST(ConcatLayerTest, AlongAxis0) {
  using Dtype = typename TypeParam::Dtype;
  auto first = Counting<Dtype>({1, 2}, 1);
  auto second = Counting<Dtype>({2, 2}, 3);
  this->Run(ConcatParam(0), {first.get(), second.get()});
  this->ExpectTop({3, 2}, {1, 2, 3, 4, 5, 6});
}

TYPED_TEST(ConcatLayerTest, AlongAxis1) {
  using Dtype = typename TypeParam::Dtype;
  auto first = Counting<Dtype>({2, 1, 2}, 1);   // 1 2 | 3 4
  auto second = Counting<Dtype>({2, 2, 2}, 5);  // 5 6 7 8 | 9 10 11 12
  auto third = Counting<Dtype>({2, 1, 2}, 13);  // 13 14 | 15 16
  this->Run(ConcatParam(1), {first.get(), second.get(), third.get()});
  this->ExpectTop({2, 4, 2}, {1, 2, 5, 6, 7, 8, 13, 14, 3, 4, 9, 10, 11, 12, 15, 16});
}

TYPED_TEST(ConcatLayerTest, LegacyConcatDimAndNegativeAxis) {
  using Dtype = typename TypeParam::Dtype;
  auto first = Counting<Dtype>({2, 1}, 1);
  auto second = Counting<Dtype>({2, 2}, 3);
  LayerParameter legacy;
  legacy.set_name("join");
  legacy.mutable_concat_param()->set_concat_dim(1);
  this->Run(legacy, {first.get(), second.get()});
  this->ExpectTop({2, 3}, {1, 3, 4, 2, 5, 6});
  this->Run(ConcatParam(-1), {first.get(), second.get()});
  this->ExpectTop({2, 3}, {1, 3, 4, 2, 5, 6});
}

TYPED_TEST(ConcatLayerTest, SingleBottomIsPassedThrough) {
  using Dtype = typename TypeParam::Dtype;
  auto only = Counting<Dtype>({2, 3}, 1);
  this->Run(ConcatParam(1), {only.get()});
  this->ExpectTop({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(this->top_.cpu_data(), only->cpu_data());
}

TYPED_TEST(ConcatLayerTest, GradientAxis0) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> first(2, 3, 2, 2), second(1, 3, 2, 2), top;
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&first);
  GetFiller<Dtype>(filler_param)->Fill(&second);
  std::vector<Blob<Dtype>*> bottom{&first, &second}, top_vec{&top};
  ConcatLayer<Dtype> layer(ConcatParam(0));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom, top_vec);
}

TYPED_TEST(ConcatLayerTest, GradientAxis1) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> first(2, 3, 2, 2), second(2, 1, 2, 2), third(2, 2, 2, 2), top;
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  for (Blob<Dtype>* blob : {&first, &second, &third}) GetFiller<Dtype>(filler_param)->Fill(blob);
  std::vector<Blob<Dtype>*> bottom{&first, &second, &third}, top_vec{&top};
  ConcatLayer<Dtype> layer(ConcatParam(1));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom, top_vec);
}

TYPED_TEST(ConcatLayerTest, BackwardSkipsBottomsNotAsked) {
  using Dtype = typename TypeParam::Dtype;
  auto first = Counting<Dtype>({2, 1}, 1);
  auto second = Counting<Dtype>({2, 2}, 3);
  std::vector<Blob<Dtype>*> bottom{first.get(), second.get()}, top_vec{&this->top_};
  ConcatLayer<Dtype> layer(ConcatParam(1));
  layer.SetUp(bottom, top_vec);
  layer.Forward(bottom, top_vec);
  for (int i = 0; i < 6; ++i) this->top_.mutable_cpu_diff()[i] = 10 + i;
  cpu_set(2, Dtype(-7), first->mutable_cpu_diff());
  layer.Backward(top_vec, std::vector<bool>{false, true}, bottom);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(first->cpu_diff()[i], -7) << i;
  const Dtype expected[] = {11, 12, 14, 15};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(second->cpu_diff()[i], expected[i]) << i;
}

TYPED_TEST(ConcatLayerTest, RefusesMismatchedShapes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> first(2, 3, 4, 5), second(2, 3, 4, 6), flat(std::vector<int>{2, 3}), top;
  std::vector<Blob<Dtype>*> top_vec{&top};
  ConcatLayer<Dtype> layer(ConcatParam(1));
  ExpectSetUpError<Dtype>(&layer, {&first, &second}, top_vec,
                          "bottom 1 has shape 2 3 4 6 (144) and bottom 0 has shape 2 3 4 5 (120)");
  ConcatLayer<Dtype> other_rank(ConcatParam(1));
  ExpectSetUpError<Dtype>(&other_rank, {&first, &flat}, top_vec, "2 3 (6)");
}

TYPED_TEST(ConcatLayerTest, RefusesBadAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> first(2, 3, 4, 5), second(2, 3, 4, 5), top;
  std::vector<Blob<Dtype>*> bottom{&first, &second}, top_vec{&top};
  ConcatLayer<Dtype> out_of_range(ConcatParam(4));
  ExpectSetUpError(&out_of_range, bottom, top_vec, "axis 4");
  LayerParameter both = ConcatParam(1);
  both.mutable_concat_param()->set_concat_dim(1);
  ConcatLayer<Dtype> ambiguous(both);
  ExpectSetUpError(&ambiguous, bottom, top_vec, "not both");
  ConcatLayer<Dtype> no_bottom(ConcatParam(1));
  ExpectSetUpError<Dtype>(&no_bottom, {}, top_vec, "bottom");
}

TYPED_TEST(ConcatLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(ConcatParam(1))->type(), "Concat");
}

}  // namespace
}  // namespace crema
