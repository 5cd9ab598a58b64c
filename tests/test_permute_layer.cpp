// Permute: forward and backward by hand (NCHW to NHWC, a 3-axis swap, an
// order that names only some axes), every element against the index
// definition, gradients against finite differences, the identity order, and
// refusal of bad orders and of running in place, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/layers/permute_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class PermuteLayerTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(PermuteLayerTest, TestDtypesAndDevices);

LayerParameter PermuteParam(const std::vector<int>& order) {
  LayerParameter param;
  param.set_name("permute1");
  param.set_type("Permute");
  for (int axis : order) param.mutable_permute_param()->add_order(axis);
  return param;
}

// A blob of the given shape holding 0, 1, 2, ... in row-major order.
template <typename Dtype>
std::unique_ptr<Blob<Dtype>> Counting(const std::vector<int>& shape) {
  std::unique_ptr<Blob<Dtype>> blob(new Blob<Dtype>(shape));
  for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = i;
  return blob;
}

template <typename Dtype>
std::vector<Dtype> PermuteForward(const std::vector<int>& order, Blob<Dtype>* bottom,
                                  Blob<Dtype>* top) {
  PermuteLayer<Dtype> layer(PermuteParam(order));
  std::vector<Blob<Dtype>*> bottom_vec{bottom}, top_vec{top};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  return std::vector<Dtype>(top->cpu_data(), top->cpu_data() + top->count());
}

TYPED_TEST(PermuteLayerTest, NchwToNhwcByHand) {
  using Dtype = typename TypeParam::Dtype;
  // x[c][h][w] = 4c + 2h + w; the top lists each position's two channels.
  auto bottom = Counting<Dtype>({1, 2, 2, 2});
  Blob<Dtype> top;
  EXPECT_EQ(PermuteForward<Dtype>({0, 2, 3, 1}, bottom.get(), &top),
            (std::vector<Dtype>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(top.shape(), (std::vector<int>{1, 2, 2, 2}));
}

TYPED_TEST(PermuteLayerTest, SwapLastTwoAxesByHand) {
  using Dtype = typename TypeParam::Dtype;
  // [[0, 1, 2], [3, 4, 5]] transposed.
  auto bottom = Counting<Dtype>({1, 2, 3});
  Blob<Dtype> top;
  EXPECT_EQ(PermuteForward<Dtype>({0, 2, 1}, bottom.get(), &top),
            (std::vector<Dtype>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(top.shape(), (std::vector<int>{1, 3, 2}));
}

TYPED_TEST(PermuteLayerTest, UnnamedAxesFollowInOrder) {
  using Dtype = typename TypeParam::Dtype;
  // order: 2 on 3 axes means 2, 0, 1: top[k][i][j] = x[i][j][k].
  auto bottom = Counting<Dtype>({2, 3, 4});
  Blob<Dtype> top;
  const std::vector<Dtype> values = PermuteForward<Dtype>({2}, bottom.get(), &top);
  EXPECT_EQ(top.shape(), (std::vector<int>{4, 2, 3}));
  for (const std::vector<int>& t : AllIndices(top.shape())) {
    EXPECT_EQ(top.data_at(t), bottom->data_at({t[1], t[2], t[0]}));
  }
}

TYPED_TEST(PermuteLayerTest, EveryElementOfAFourAxisPermutation) {
  using Dtype = typename TypeParam::Dtype;
  auto bottom = Counting<Dtype>({2, 3, 4, 5});
  Blob<Dtype> top;
  PermuteForward<Dtype>({3, 1, 0, 2}, bottom.get(), &top);
  EXPECT_EQ(top.shape(), (std::vector<int>{5, 3, 2, 4}));
  for (const std::vector<int>& t : AllIndices(top.shape())) {
    EXPECT_EQ(top.data_at(t), bottom->data_at({t[2], t[1], t[3], t[0]}));
  }
}

TYPED_TEST(PermuteLayerTest, IdentityOrderCopies) {
  using Dtype = typename TypeParam::Dtype;
  auto bottom = Counting<Dtype>({2, 3});
  Blob<Dtype> top;
  EXPECT_EQ(PermuteForward<Dtype>({}, bottom.get(), &top), (std::vector<Dtype>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(PermuteForward<Dtype>({0, 1}, bottom.get(), &top),
            (std::vector<Dtype>{0, 1, 2, 3, 4, 5}));
}

TYPED_TEST(PermuteLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  // The top is [[0, 3], [1, 4], [2, 5]] of bottom indices; its gradient
  // 10, 20, ..., 60 goes back to those places.
  auto bottom = Counting<Dtype>({1, 2, 3});
  Blob<Dtype> top;
  PermuteLayer<Dtype> layer(PermuteParam({0, 2, 1}));
  std::vector<Blob<Dtype>*> bottom_vec{bottom.get()}, top_vec{&top};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const Dtype diff[6] = {10, 20, 30, 40, 50, 60};
  std::copy(diff, diff + 6, top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  EXPECT_EQ(std::vector<Dtype>(bottom->cpu_diff(), bottom->cpu_diff() + 6),
            (std::vector<Dtype>{10, 30, 50, 20, 40, 60}));
}

TYPED_TEST(PermuteLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(2, 3, 2, 4), top;
  Context::set_random_seed(1701);
  FillGaussian(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  for (const std::vector<int>& order : {std::vector<int>{0, 2, 3, 1}, std::vector<int>{3, 1}}) {
    PermuteLayer<Dtype> layer(PermuteParam(order));
    GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
    checker.CheckGradient(&layer, bottom_vec, top_vec);
  }
}

TYPED_TEST(PermuteLayerTest, BadOrdersRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 4}), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  for (const std::vector<int>& order : {std::vector<int>{3}, std::vector<int>{0, 1, 2, 3},
                                        std::vector<int>{1, 1}, std::vector<int>{0, 2, 0}}) {
    PermuteLayer<Dtype> layer(PermuteParam(order));
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, top_vec);
  }
}

TYPED_TEST(PermuteLayerTest, InPlaceRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob(std::vector<int>{2, 3});
  std::vector<Blob<Dtype>*> both{&blob};
  PermuteLayer<Dtype> layer(PermuteParam({1, 0}));
  ExpectSetUpError<Dtype>(&layer, both, both, "in place");
}

TYPED_TEST(PermuteLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Permute");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Permute");
}

}  // namespace
}  // namespace crema
