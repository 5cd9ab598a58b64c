// PReLU: default and trained slopes, forward and backward by hand per channel
// and shared (the slope gradient accumulates, the bottom gradient does not),
// gradients of the bottom and the slopes against finite differences, in place,
// propagate_down flags, refusal of mismatched slopes and shapes, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/prelu_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class PReLULayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  PReLULayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(PReLULayerTest, TestDtypesAndDevices);

LayerParameter PReLUParam(bool channel_shared) {
  LayerParameter param;
  param.set_name("prelu1");
  param.set_type("PReLU");
  param.mutable_prelu_param()->set_channel_shared(channel_shared);
  return param;
}

// Distinct slopes per channel, so a wrong channel index shows.
LayerParameter PReLUParamWithRandomSlopes(bool channel_shared) {
  LayerParameter param = PReLUParam(channel_shared);
  FillerParameter* filler = param.mutable_prelu_param()->mutable_filler();
  filler->set_type("uniform");
  filler->set_min(0.05);
  filler->set_max(0.6);
  return param;
}

// Shape 2 x 2 x 2: sample 0 channels {-2, 4}, {-1, 3}; sample 1 {-4, 1}, {-0.5, 0}.
template <typename Dtype>
void FillByHandInput(Blob<Dtype>* blob) {
  blob->Reshape(std::vector<int>{2, 2, 2});
  const std::vector<Dtype> values = {-2, 4, -1, 3, -4, 1, -0.5, 0};
  std::copy(values.begin(), values.end(), blob->mutable_cpu_data());
}

template <typename Dtype>
std::vector<Dtype> ValuesOf(const Dtype* data, int count) {
  return std::vector<Dtype>(data, data + count);
}

TYPED_TEST(PReLULayerTest, DefaultSlopesAreAQuarter) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(PReLUParam(false));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 1u);
  EXPECT_EQ(layer.blobs()[0]->shape(), std::vector<int>{3});
  EXPECT_EQ(ValuesOf(layer.blobs()[0]->cpu_data(), 3), (std::vector<Dtype>{0.25, 0.25, 0.25}));

  PReLULayer<Dtype> shared(PReLUParam(true));
  shared.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(shared.blobs().size(), 1u);
  // Caffe's shared slope has no axes.
  EXPECT_EQ(shared.blobs()[0]->num_axes(), 0);
  ASSERT_EQ(shared.blobs()[0]->count(), 1);
  EXPECT_EQ(shared.blobs()[0]->cpu_data()[0], Dtype(0.25));
}

TYPED_TEST(PReLULayerTest, ForwardByHandPerChannel) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillByHandInput(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(PReLUParam(false));
  layer.SetUp(bottom_vec, top_vec);
  layer.blobs()[0]->mutable_cpu_data()[0] = 0.25;
  layer.blobs()[0]->mutable_cpu_data()[1] = 0.5;
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(ValuesOf(top.cpu_data(), 8), (std::vector<Dtype>{-0.5, 4, -0.5, 3, -1, 1, -0.25, 0}));
}

TYPED_TEST(PReLULayerTest, ForwardByHandShared) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillByHandInput(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(PReLUParam(true));
  layer.SetUp(bottom_vec, top_vec);
  layer.blobs()[0]->mutable_cpu_data()[0] = 0.5;
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(ValuesOf(top.cpu_data(), 8), (std::vector<Dtype>{-1, 4, -0.5, 3, -2, 1, -0.25, 0}));
}

TYPED_TEST(PReLULayerTest, ForwardTwoAxisBottom) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3}), top;
  const std::vector<Dtype> values = {-1, -1, -1, -2, 2, -2};
  std::copy(values.begin(), values.end(), bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(PReLUParam(false));
  layer.SetUp(bottom_vec, top_vec);
  layer.blobs()[0]->mutable_cpu_data()[0] = 0.5;
  layer.blobs()[0]->mutable_cpu_data()[1] = 0.25;
  layer.blobs()[0]->mutable_cpu_data()[2] = 0.125;
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(ValuesOf(top.cpu_data(), 6), (std::vector<Dtype>{-0.5, -0.25, -0.125, -1, 2, -0.25}));
}

TYPED_TEST(PReLULayerTest, BackwardByHandAccumulatesSlopeGradient) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillByHandInput(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(PReLUParam(false));
  layer.SetUp(bottom_vec, top_vec);
  Blob<Dtype>& slopes = *layer.blobs()[0];
  slopes.mutable_cpu_data()[0] = 0.25;
  slopes.mutable_cpu_data()[1] = 0.5;
  cpu_set(2, Dtype(0), slopes.mutable_cpu_diff());
  layer.Forward(bottom_vec, top_vec);
  const std::vector<Dtype> top_diff = {1, 1, 2, 2, 1, 1, 3, 3};
  std::copy(top_diff.begin(), top_diff.end(), top.mutable_cpu_diff());
  const std::vector<Dtype> expected_bottom_diff = {0.25, 1, 1, 2, 0.25, 1, 1.5, 1.5};
  // Slope c collects top_diff * x over its x <= 0: c0 from -2 and -4, c1 from
  // -1 (diff 2), -0.5 and 0 (diff 3).
  layer.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  EXPECT_EQ(ValuesOf(bottom.cpu_diff(), 8), expected_bottom_diff);
  EXPECT_EQ(ValuesOf(slopes.cpu_diff(), 2), (std::vector<Dtype>{-6, -3.5}));
  layer.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  EXPECT_EQ(ValuesOf(bottom.cpu_diff(), 8), expected_bottom_diff);
  EXPECT_EQ(ValuesOf(slopes.cpu_diff(), 2), (std::vector<Dtype>{-12, -7}));
}

TYPED_TEST(PReLULayerTest, BackwardByHandShared) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillByHandInput(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(PReLUParam(true));
  layer.SetUp(bottom_vec, top_vec);
  Blob<Dtype>& slope = *layer.blobs()[0];
  slope.mutable_cpu_data()[0] = 0.5;
  cpu_set(1, Dtype(0), slope.mutable_cpu_diff());
  layer.Forward(bottom_vec, top_vec);
  const std::vector<Dtype> top_diff = {1, 1, 2, 2, 1, 1, 3, 3};
  std::copy(top_diff.begin(), top_diff.end(), top.mutable_cpu_diff());
  layer.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  EXPECT_EQ(ValuesOf(bottom.cpu_diff(), 8), (std::vector<Dtype>{0.5, 1, 1, 2, 0.5, 1, 1.5, 1.5}));
  EXPECT_EQ(slope.cpu_diff()[0], Dtype(-9.5));
}

TYPED_TEST(PReLULayerTest, GradientPerChannel) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(PReLUParamWithRandomSlopes(false));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PReLULayerTest, GradientShared) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(PReLUParamWithRandomSlopes(true));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PReLULayerTest, GradientTwoAxisBottom) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{4, 3}), top;
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(PReLUParamWithRandomSlopes(false));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0., 0.01);
  checker.CheckGradientEltwise(&layer, bottom_vec, top_vec);
}

// In place the layer must keep the input for backward, and take the slope
// gradient before the bottom gradient overwrites the shared diff.
TYPED_TEST(PReLULayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  for (const bool channel_shared : {false, true}) {
    Blob<Dtype> bottom, top, shared;
    bottom.CopyFrom(*this->bottom_, false, true);
    shared.CopyFrom(*this->bottom_, false, true);
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top}, shared_vec{&shared};
    PReLULayer<Dtype> out_of_place(PReLUParamWithRandomSlopes(channel_shared));
    PReLULayer<Dtype> in_place(PReLUParamWithRandomSlopes(channel_shared));
    out_of_place.SetUp(bottom_vec, top_vec);
    in_place.SetUp(shared_vec, shared_vec);
    in_place.blobs()[0]->CopyFrom(*out_of_place.blobs()[0]);
    const int num_slopes = in_place.blobs()[0]->count();
    cpu_set(num_slopes, Dtype(0), out_of_place.blobs()[0]->mutable_cpu_diff());
    cpu_set(num_slopes, Dtype(0), in_place.blobs()[0]->mutable_cpu_diff());

    out_of_place.Forward(bottom_vec, top_vec);
    in_place.Forward(shared_vec, shared_vec);
    const int count = bottom.count();
    EXPECT_EQ(ValuesOf(shared.cpu_data(), count), ValuesOf(top.cpu_data(), count));
    for (int i = 0; i < count; ++i) {
      top.mutable_cpu_diff()[i] = shared.mutable_cpu_diff()[i] = Dtype(0.1) * (i % 7) - Dtype(0.3);
    }
    out_of_place.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
    in_place.Backward(shared_vec, std::vector<bool>{true}, shared_vec);
    EXPECT_EQ(ValuesOf(shared.cpu_diff(), count), ValuesOf(bottom.cpu_diff(), count));
    EXPECT_EQ(ValuesOf(in_place.blobs()[0]->cpu_diff(), num_slopes),
              ValuesOf(out_of_place.blobs()[0]->cpu_diff(), num_slopes));
  }
}

TYPED_TEST(PReLULayerTest, PropagateDownFlagsAreRespected) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(PReLUParam(false));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int count = this->bottom_->count();
  Blob<Dtype>& slopes = *layer.blobs()[0];
  cpu_set(count, Dtype(1), this->top_->mutable_cpu_diff());

  // No slope gradient: the slope diff keeps its value.
  cpu_set(3, Dtype(5), slopes.mutable_cpu_diff());
  layer.set_param_propagate_down(0, false);
  layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  EXPECT_EQ(ValuesOf(slopes.cpu_diff(), 3), (std::vector<Dtype>{5, 5, 5}));
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(this->bottom_->cpu_diff()[i], this->bottom_->cpu_data()[i] > 0 ? 1 : Dtype(0.25));
  }

  // No bottom gradient: the bottom diff keeps its value.
  layer.set_param_propagate_down(0, true);
  cpu_set(count, Dtype(7), this->bottom_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, std::vector<bool>{false}, this->bottom_vec_);
  for (int i = 0; i < count; ++i) EXPECT_EQ(this->bottom_->cpu_diff()[i], 7) << i;
  EXPECT_NE(ValuesOf(slopes.cpu_diff(), 3), (std::vector<Dtype>{5, 5, 5}));
}

TYPED_TEST(PReLULayerTest, UsesTrainedSlopes) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PReLUParam(false);
  Blob<Dtype> trained(std::vector<int>{3});
  trained.mutable_cpu_data()[0] = 0.1;
  trained.mutable_cpu_data()[1] = 0.2;
  trained.mutable_cpu_data()[2] = 0.3;
  trained.ToProto(param.add_blobs());
  Blob<Dtype> bottom(std::vector<int>{1, 3, 1}), top;
  cpu_set(3, Dtype(-1), bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(ValuesOf(top.cpu_data(), 3),
            (std::vector<Dtype>{Dtype(-0.1), Dtype(-0.2), Dtype(-0.3)}));
}

TYPED_TEST(PReLULayerTest, TrainedSlopeCountMismatchRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PReLUParam(false);
  Blob<Dtype>(std::vector<int>{4}).ToProto(param.add_blobs());
  PReLULayer<Dtype> layer(param);
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);

  LayerParameter shared_param = PReLUParam(true);
  Blob<Dtype>(std::vector<int>{3}).ToProto(shared_param.add_blobs());
  PReLULayer<Dtype> shared(shared_param);
  ExpectSetUpThrowsNamingLayer<Dtype>(&shared, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PReLULayerTest, BottomWithoutChannelAxisRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{6});
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  PReLULayer<Dtype> layer(PReLUParam(true));
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, this->top_vec_);
}

TYPED_TEST(PReLULayerTest, ReshapeToOtherChannelCountRefused) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(PReLUParam(false));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_->Reshape(2, 4, 4, 5);
  try {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    FAIL() << "4 channels must be refused by a layer with 3 slopes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prelu1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("PReLU"), std::string::npos) << e.what();
  }
}

TYPED_TEST(PReLULayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("PReLU");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "PReLU");
}

}  // namespace
}  // namespace crema
