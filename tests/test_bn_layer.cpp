// BN: both forks' variants. PSPNet / TSN: forward by hand with the stored
// statistics (TEST, frozen) and with the batch's (TRAIN), the running
// averages by hand, the default blobs and the pinned param specs; SegNet:
// INFERENCE and LEARN by hand (LEARN uses the batch in TEST too), its eps.
// Gradients against finite differences in every mode, with the whole output
// as the loss; in place against out of place; configuration errors.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/layers/bn_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class BNLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  BNLayerTest()
      : bottom_(new Blob<Dtype>(2, 3, 3, 2)),
        small_(new Blob<Dtype>(2, 2, 1, 2)),
        top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillGaussian(bottom_.get());
    // [n][c][s]: channel 0 holds 1, 2, 3, 6 (mean 3, biased variance 3.5),
    // channel 1 holds 0, 0, 4, 4 (mean 2, variance 4).
    SetValues(small_.get(), {1, 2, 0, 0, 3, 6, 4, 4});
    bottom_vec_ = {bottom_.get()};
    small_vec_ = {small_.get()};
    top_vec_ = {top_.get()};
  }

  std::vector<Dtype> Top() const {
    return std::vector<Dtype>(top_->cpu_data(), top_->cpu_data() + top_->count());
  }

  void ExpectTopNear(const std::vector<double>& expected, double tolerance = 1e-5) {
    ASSERT_EQ(top_->count(), static_cast<int>(expected.size()));
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(top_->cpu_data()[i], expected[i], tolerance) << i;
    }
  }

  std::unique_ptr<Blob<Dtype>> bottom_, small_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, small_vec_, top_vec_;
};
TYPED_TEST_SUITE(BNLayerTest, TestDtypesAndDevices);

// Adds to param a stored blob of `size` zeros, as a loaded model has.
void AddStoredBlob(LayerParameter* param, int size) {
  BlobProto* blob = param->add_blobs();
  blob->mutable_shape()->add_dim(size);
  for (int i = 0; i < size; ++i) blob->add_data(0);
}

// A BN layer of the PSPNet / TSN variant in the given phase.
LayerParameter PspParam(Phase phase) {
  LayerParameter param;
  param.set_name("bn1");
  param.set_type("BN");
  param.set_phase(phase);
  param.mutable_bn_param()->set_momentum(0.9f);
  return param;
}

// A BN layer of the SegNet variant in the given mode (and phase TEST, where
// LEARN still normalises with the batch).
LayerParameter SegNetParam(BNParameter::BNMode mode) {
  LayerParameter param;
  param.set_name("bn2");
  param.set_type("BN");
  param.set_phase(TEST);
  param.mutable_bn_param()->set_bn_mode(mode);
  return param;
}

TYPED_TEST(BNLayerTest, PspStoredStatisticsByHand) {
  using Dtype = typename TypeParam::Dtype;
  // Channel 0: (x - 1) / 2 * 3 + 1; channel 1: (x - 2) / 0.5 * 0.5 - 1.
  LayerParameter param = PspParam(TEST);
  param.mutable_bn_param()->set_eps(0);
  BNLayer<Dtype> layer(param);
  layer.SetUp(this->small_vec_, this->top_vec_);
  SetValues(layer.blobs()[0].get(), {3, 0.5});
  SetValues(layer.blobs()[1].get(), {1, -1});
  SetValues(layer.blobs()[2].get(), {1, 2});
  SetValues(layer.blobs()[3].get(), {4, 0.25});
  layer.Forward(this->small_vec_, this->top_vec_);
  this->ExpectTopNear({1, 2.5, -3, -3, 4, 8.5, 1, 1});
  // TEST leaves the statistics alone.
  EXPECT_EQ(layer.blobs()[2]->cpu_data()[0], Dtype(1));
  EXPECT_EQ(layer.blobs()[3]->cpu_data()[1], Dtype(0.25));
}

TYPED_TEST(BNLayerTest, PspFrozenUsesStoredStatisticsInTrain) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  param.mutable_bn_param()->set_eps(0);
  param.mutable_bn_param()->set_frozen(true);
  BNLayer<Dtype> layer(param);
  layer.SetUp(this->small_vec_, this->top_vec_);
  EXPECT_FALSE(layer.uses_batch_statistics());
  SetValues(layer.blobs()[2].get(), {1, 2});
  SetValues(layer.blobs()[3].get(), {4, 0.25});
  layer.Forward(this->small_vec_, this->top_vec_);
  // Default slope 1, bias 0.
  this->ExpectTopNear({0, 0.5, -4, -4, 1, 2.5, 4, 4});
  EXPECT_EQ(layer.blobs()[2]->cpu_data()[0], Dtype(1));
}

TYPED_TEST(BNLayerTest, PspTrainByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  param.mutable_bn_param()->set_eps(0);
  BNLayer<Dtype> layer(param);
  layer.SetUp(this->small_vec_, this->top_vec_);
  EXPECT_TRUE(layer.uses_batch_statistics());
  SetValues(layer.blobs()[0].get(), {1, 2});
  SetValues(layer.blobs()[1].get(), {0, 0.5});
  layer.Forward(this->small_vec_, this->top_vec_);
  const double s = std::sqrt(3.5);
  this->ExpectTopNear({-2 / s, -1 / s, -1.5, -1.5, 0, 3 / s, 2.5, 2.5});
  // Running averages from mean 0, variance 1: 0.9 * old + 0.1 * batch.
  const Dtype* mean = layer.blobs()[2]->cpu_data();
  const Dtype* variance = layer.blobs()[3]->cpu_data();
  EXPECT_NEAR(mean[0], 0.3, 1e-6);
  EXPECT_NEAR(mean[1], 0.2, 1e-6);
  EXPECT_NEAR(variance[0], 1.25, 1e-6);
  EXPECT_NEAR(variance[1], 1.3, 1e-6);
  layer.Forward(this->small_vec_, this->top_vec_);
  EXPECT_NEAR(layer.blobs()[2]->cpu_data()[0], 0.9 * 0.3 + 0.3, 1e-6);
  EXPECT_NEAR(layer.blobs()[3]->cpu_data()[1], 0.9 * 1.3 + 0.4, 1e-6);
}

TYPED_TEST(BNLayerTest, PspDefaultBlobsAndParamSpecs) {
  using Dtype = typename TypeParam::Dtype;
  BNLayer<Dtype> layer(PspParam(TRAIN));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_FALSE(layer.is_segnet());
  ASSERT_EQ(layer.blobs().size(), 4u);
  const std::vector<double> initial{1, 0, 0, 1};  // slope, bias, mean, variance
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(layer.blobs()[b]->shape(), (std::vector<int>{1, 3, 1, 1})) << b;
    for (int c = 0; c < 3; ++c) EXPECT_EQ(layer.blobs()[b]->cpu_data()[c], initial[b]) << b;
  }
  const LayerParameter& specs = layer.layer_param();
  ASSERT_EQ(specs.param_size(), 4);
  EXPECT_EQ(specs.param(0).lr_mult(), 1);
  EXPECT_EQ(specs.param(1).lr_mult(), 1);
  for (int i : {2, 3}) {
    EXPECT_EQ(specs.param(i).lr_mult(), 0) << i;
    EXPECT_EQ(specs.param(i).decay_mult(), 0) << i;
    EXPECT_FALSE(layer.param_propagate_down(i)) << i;
  }
}

TYPED_TEST(BNLayerTest, PspStatisticsLrMultOverriddenAsTheForksDo) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  for (int i = 0; i < 4; ++i) param.add_param()->set_lr_mult(2);
  BNLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const LayerParameter& specs = layer.layer_param();
  EXPECT_EQ(specs.param(0).lr_mult(), 2);
  EXPECT_EQ(specs.param(1).lr_mult(), 2);
  EXPECT_EQ(specs.param(2).lr_mult(), 0);
  EXPECT_EQ(specs.param(3).lr_mult(), 0);
}

TYPED_TEST(BNLayerTest, PspFrozenPinsSlopeAndBias) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  param.mutable_bn_param()->set_frozen(true);
  param.add_param()->set_lr_mult(1);
  BNLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(layer.layer_param().param(i).lr_mult(), 0) << i;
}

TYPED_TEST(BNLayerTest, NoBnParamIsThePspVariant) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("bn3");
  param.set_phase(TEST);
  BNLayer<Dtype> layer(param);
  layer.SetUp(this->small_vec_, this->top_vec_);
  EXPECT_FALSE(layer.is_segnet());
  EXPECT_EQ(layer.blobs().size(), 4u);
  layer.Forward(this->small_vec_, this->top_vec_);
  // Mean 0, variance 1, eps 1e-5.
  const double r = 1 / std::sqrt(1 + 1e-5);
  this->ExpectTopNear({r, 2 * r, 0, 0, 3 * r, 6 * r, 4 * r, 4 * r});
}

TYPED_TEST(BNLayerTest, SegNetInferenceByHand) {
  using Dtype = typename TypeParam::Dtype;
  BNLayer<Dtype> layer(SegNetParam(BNParameter::INFERENCE));
  layer.SetUp(this->small_vec_, this->top_vec_);
  EXPECT_TRUE(layer.is_segnet());
  ASSERT_EQ(layer.blobs().size(), 2u);
  SetValues(layer.blobs()[0].get(), {2, -1});
  SetValues(layer.blobs()[1].get(), {1, 0.5});
  layer.Forward(this->small_vec_, this->top_vec_);
  this->ExpectTopNear({3, 5, 0.5, 0.5, 7, 13, -3.5, -3.5});
}

TYPED_TEST(BNLayerTest, SegNetLearnUsesTheBatchInTest) {
  using Dtype = typename TypeParam::Dtype;
  BNLayer<Dtype> layer(SegNetParam(BNParameter::LEARN));
  layer.SetUp(this->small_vec_, this->top_vec_);
  EXPECT_TRUE(layer.uses_batch_statistics());
  SetValues(layer.blobs()[0].get(), {1, 2});
  SetValues(layer.blobs()[1].get(), {0, 0.5});
  layer.Forward(this->small_vec_, this->top_vec_);
  const double s = std::sqrt(3.5);
  this->ExpectTopNear({-2 / s, -1 / s, -1.5, -1.5, 0, 3 / s, 2.5, 2.5});
}

TYPED_TEST(BNLayerTest, SegNetDefaultEpsIsTheForks) {
  using Dtype = typename TypeParam::Dtype;
  // Values +-1e-4: variance 1e-8, so eps 1e-9 gives 1e-4 / sqrt(1.1e-8).
  SetValues(this->small_.get(), {1e-4, -1e-4, 0, 0, 1e-4, -1e-4, 0, 0});
  BNLayer<Dtype> layer(SegNetParam(BNParameter::LEARN));
  layer.SetUp(this->small_vec_, this->top_vec_);
  layer.Forward(this->small_vec_, this->top_vec_);
  EXPECT_NEAR(this->top_->cpu_data()[0], 1e-4 / std::sqrt(1.1e-8), 1e-3);
}

TYPED_TEST(BNLayerTest, SegNetVariantChosenByAnyOfItsFields) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  param.mutable_bn_param()->mutable_shift_filler()->set_type("constant");
  BNLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_TRUE(layer.is_segnet());
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[0]->cpu_data()[0], Dtype(1));  // default scale
  EXPECT_EQ(layer.blobs()[1]->cpu_data()[0], Dtype(0));
  EXPECT_TRUE(layer.param_propagate_down(0));
  EXPECT_TRUE(layer.param_propagate_down(1));
}

// Finite differences of the whole output against backward, with random
// slope / scale and bias / shift (and, for stored statistics, mean and a
// positive variance).
template <typename Dtype>
void CheckBNGradient(const LayerParameter& param, Blob<Dtype>* bottom, Blob<Dtype>* top) {
  BNLayer<Dtype> layer(param);
  std::vector<Blob<Dtype>*> bottom_vec{bottom}, top_vec{top};
  layer.SetUp(bottom_vec, top_vec);
  for (auto& blob : layer.blobs()) FillGaussian(blob.get());
  if (layer.blobs().size() == 4) {
    Dtype* variance = layer.blobs()[3]->mutable_cpu_data();
    for (int c = 0; c < layer.blobs()[3]->count(); ++c) variance[c] = std::fabs(variance[c]) + 0.5;
  }
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, top_vec);
}

TYPED_TEST(BNLayerTest, GradientPspTrain) {
  CheckBNGradient(PspParam(TRAIN), this->bottom_.get(), this->top_.get());
}

TYPED_TEST(BNLayerTest, GradientPspTest) {
  CheckBNGradient(PspParam(TEST), this->bottom_.get(), this->top_.get());
}

TYPED_TEST(BNLayerTest, GradientPspFrozen) {
  LayerParameter param = PspParam(TRAIN);
  param.mutable_bn_param()->set_frozen(true);
  CheckBNGradient(param, this->bottom_.get(), this->top_.get());
}

TYPED_TEST(BNLayerTest, GradientSegNetLearn) {
  CheckBNGradient(SegNetParam(BNParameter::LEARN), this->bottom_.get(), this->top_.get());
}

TYPED_TEST(BNLayerTest, GradientSegNetInference) {
  CheckBNGradient(SegNetParam(BNParameter::INFERENCE), this->bottom_.get(), this->top_.get());
}

TYPED_TEST(BNLayerTest, GradientTwoAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{5, 3});
  FillGaussian(&bottom);
  CheckBNGradient(PspParam(TRAIN), &bottom, this->top_.get());
}

TYPED_TEST(BNLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  ExpectInPlaceMatchesOutOfPlace<Dtype>(PspParam(TRAIN), *this->bottom_);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(PspParam(TEST), *this->bottom_);
  ExpectInPlaceMatchesOutOfPlace<Dtype>(SegNetParam(BNParameter::LEARN), *this->bottom_);
}

TYPED_TEST(BNLayerTest, BadMomentumRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  param.mutable_bn_param()->set_momentum(1.5f);
  BNLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_, "momentum");
}

TYPED_TEST(BNLayerTest, NegativeEpsRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  param.mutable_bn_param()->set_eps(-1);
  BNLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_, "eps");
}

TYPED_TEST(BNLayerTest, TooManyParamSpecsRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TRAIN);
  for (int i = 0; i < 5; ++i) param.add_param();
  BNLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_, "param specs");
}

TYPED_TEST(BNLayerTest, LoadedBlobsOfWrongCountRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = SegNetParam(BNParameter::INFERENCE);
  for (int i = 0; i < 4; ++i) AddStoredBlob(&param, 3);
  BNLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_, "needs 2 blobs");
}

TYPED_TEST(BNLayerTest, LoadedBlobsOfWrongSizeRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PspParam(TEST);
  for (int i = 0; i < 4; ++i) AddStoredBlob(&param, i == 3 ? 4 : 3);
  BNLayer<Dtype> layer(param);
  ExpectSetUpError<Dtype>(&layer, this->bottom_vec_, this->top_vec_, "does not fit 3 channels");
}

TYPED_TEST(BNLayerTest, OneAxisBottomRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{4});
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  BNLayer<Dtype> layer(PspParam(TRAIN));
  ExpectSetUpThrowsNamingLayer<Dtype>(&layer, bottom_vec, this->top_vec_);
}

TYPED_TEST(BNLayerTest, ChannelChangeRefused) {
  using Dtype = typename TypeParam::Dtype;
  BNLayer<Dtype> layer(PspParam(TRAIN));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_->Reshape(2, 4, 3, 2);
  const std::string message =
      ErrorMessageOf([&] { layer.Reshape(this->bottom_vec_, this->top_vec_); });
  EXPECT_NE(message.find("bn1"), std::string::npos) << message;
  EXPECT_NE(message.find("3 channels"), std::string::npos) << message;
}

TYPED_TEST(BNLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(PspParam(TEST))->type(), "BN");
}

}  // namespace
}  // namespace crema
