// BatchNorm: training forward by hand and its per-channel mean 0 / variance
// 1, the running sums after two forwards by hand, global-statistics forward
// by hand (TEST default, explicit flag, zero factor), gradients against
// finite differences with batch and with global statistics, in-place
// backward against out-of-place, the frozen statistics blobs (param specs,
// lr_mult), NVCaffe's and OpenCV's learned scale and bias (scale_bias) by hand
// and against finite differences, and configuration errors.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/batch_norm_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class BatchNormLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  BatchNormLayerTest()
      : bottom_(new Blob<Dtype>(2, 3, 3, 2)),
        small_(new Blob<Dtype>(std::vector<int>{2, 2, 2})),
        top_(new Blob<Dtype>()) {
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    // [n][c][s]: channel 0 holds 1, 2, 3, 6 (mean 3, variance 3.5), channel
    // 1 holds 0, 0, 4, 4 (mean 2, variance 4).
    const Dtype values[] = {1, 2, 0, 0, 3, 6, 4, 4};
    std::copy(values, values + 8, small_->mutable_cpu_data());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }

  // Expects SetUp of a BatchNorm layer named "bn2" to throw an Error naming
  // it and containing fragment.
  void ExpectSetUpError(const LayerParameter& param, const std::string& fragment) {
    LayerParameter named = param;
    named.set_name("bn2");
    BatchNormLayer<Dtype> layer(named);
    try {
      layer.SetUp(this->bottom_vec_, this->top_vec_);
      FAIL() << "expected an Error containing '" << fragment << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("bn2"), std::string::npos) << message;
      EXPECT_NE(message.find("BatchNorm"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  std::unique_ptr<Blob<Dtype>> bottom_, small_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(BatchNormLayerTest, TestDtypesAndDevices);

TYPED_TEST(BatchNormLayerTest, ForwardTrainByHand) {
  using Dtype = typename TypeParam::Dtype;
  std::vector<Blob<Dtype>*> bottom_vec{this->small_.get()};
  LayerParameter param;
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  layer.Forward(bottom_vec, this->top_vec_);
  const double std0 = std::sqrt(3.5 + 1e-5), std1 = std::sqrt(4 + 1e-5);
  const double expected[] = {-2 / std0, -1 / std0, -2 / std1, -2 / std1,
                             0 / std0,  3 / std0,  2 / std1,  2 / std1};
  ASSERT_EQ(this->top_->shape(), this->small_->shape());
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(this->top_->cpu_data()[i], expected[i], 1e-5) << i;
}

TYPED_TEST(BatchNormLayerTest, ForwardTrainNormalisesEachChannel) {
  using Dtype = typename TypeParam::Dtype;
  // Give each channel its own offset and spread, so a wrong axis shows.
  Dtype* data = this->bottom_->mutable_cpu_data();
  for (int i = 0; i < this->bottom_->count(); ++i) {
    const int c = (i / 6) % 3;
    data[i] = data[i] * Dtype(c + 1) + Dtype(10 * c);
  }
  LayerParameter param;
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int c = 0; c < 3; ++c) {
    double sum = 0, sum_sq = 0;
    for (int n = 0; n < 2; ++n) {
      for (int s = 0; s < 6; ++s) {
        const double y = this->top_->cpu_data()[(n * 3 + c) * 6 + s];
        sum += y;
        sum_sq += y * y;
      }
    }
    const double mean = sum / 12, variance = sum_sq / 12 - mean * mean;
    EXPECT_NEAR(mean, 0, 1e-5) << "channel " << c;
    EXPECT_NEAR(variance, 1, 1e-3) << "channel " << c;
  }
}

TYPED_TEST(BatchNormLayerTest, RunningSumsAfterTwoForwardsByHand) {
  using Dtype = typename TypeParam::Dtype;
  std::vector<Blob<Dtype>*> bottom_vec{this->small_.get()};
  LayerParameter param;
  param.mutable_batch_norm_param()->set_moving_average_fraction(0.9);
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 3u);
  EXPECT_EQ(layer.blobs()[0]->shape(), std::vector<int>{2});
  EXPECT_EQ(layer.blobs()[1]->shape(), std::vector<int>{2});
  EXPECT_EQ(layer.blobs()[2]->shape(), std::vector<int>{1});
  layer.Forward(bottom_vec, this->top_vec_);
  // Second batch: twice the first (means 6, 4; variances 14, 16).
  this->small_->scale_data(Dtype(2));
  layer.Forward(bottom_vec, this->top_vec_);
  // sum = batch + 0.9 * sum; the variance is unbiased (m = 4: times 4/3).
  EXPECT_NEAR(layer.blobs()[2]->cpu_data()[0], 1.9, 1e-6);
  EXPECT_NEAR(layer.blobs()[0]->cpu_data()[0], 6 + 0.9 * 3, 1e-5);
  EXPECT_NEAR(layer.blobs()[0]->cpu_data()[1], 4 + 0.9 * 2, 1e-5);
  EXPECT_NEAR(layer.blobs()[1]->cpu_data()[0], (14 + 0.9 * 3.5) * 4 / 3, 1e-4);
  EXPECT_NEAR(layer.blobs()[1]->cpu_data()[1], (16 + 0.9 * 4) * 4 / 3, 1e-4);
}

TYPED_TEST(BatchNormLayerTest, ForwardGlobalStatsByHand) {
  using Dtype = typename TypeParam::Dtype;
  std::vector<Blob<Dtype>*> bottom_vec{this->small_.get()};
  LayerParameter param;
  param.set_phase(TEST);  // global statistics by default
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  // Sums for factor 2: mean (1, 2), variance (4, 1).
  const Dtype mean_sum[] = {2, 4}, variance_sum[] = {8, 2};
  std::copy(mean_sum, mean_sum + 2, layer.blobs()[0]->mutable_cpu_data());
  std::copy(variance_sum, variance_sum + 2, layer.blobs()[1]->mutable_cpu_data());
  layer.blobs()[2]->mutable_cpu_data()[0] = 2;
  layer.Forward(bottom_vec, this->top_vec_);
  const double std0 = std::sqrt(4 + 1e-5), std1 = std::sqrt(1 + 1e-5);
  const double expected[] = {0 / std0, 1 / std0, -2 / std1, -2 / std1,
                             2 / std0, 5 / std0, 2 / std1,  2 / std1};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(this->top_->cpu_data()[i], expected[i], 1e-5) << i;
  // The statistics are read, not updated.
  EXPECT_EQ(layer.blobs()[2]->cpu_data()[0], Dtype(2));
  EXPECT_EQ(layer.blobs()[0]->cpu_data()[1], Dtype(4));
  EXPECT_EQ(layer.blobs()[1]->cpu_data()[0], Dtype(8));

  // A zero factor means zero statistics: y = x / sqrt(eps).
  layer.blobs()[2]->mutable_cpu_data()[0] = 0;
  layer.Forward(bottom_vec, this->top_vec_);
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(this->top_->cpu_data()[i], this->small_->cpu_data()[i] / std::sqrt(1e-5), 1e-2)
        << i;
  }
}

TYPED_TEST(BatchNormLayerTest, UseGlobalStatsOverridesPhase) {
  using Dtype = typename TypeParam::Dtype;
  std::vector<Blob<Dtype>*> bottom_vec{this->small_.get()};
  // TRAIN with use_global_stats: the (zero) running statistics are used.
  LayerParameter train_global;
  train_global.mutable_batch_norm_param()->set_use_global_stats(true);
  BatchNormLayer<Dtype> global(train_global);
  global.SetUp(bottom_vec, this->top_vec_);
  global.Forward(bottom_vec, this->top_vec_);
  EXPECT_NEAR(this->top_->cpu_data()[0], 1 / std::sqrt(1e-5), 1e-2);
  EXPECT_EQ(global.blobs()[2]->cpu_data()[0], Dtype(0));
  // TEST without it: batch statistics, and the running sums are updated.
  LayerParameter test_batch;
  test_batch.set_phase(TEST);
  test_batch.mutable_batch_norm_param()->set_use_global_stats(false);
  BatchNormLayer<Dtype> batch(test_batch);
  batch.SetUp(bottom_vec, this->top_vec_);
  batch.Forward(bottom_vec, this->top_vec_);
  EXPECT_NEAR(this->top_->cpu_data()[0], -2 / std::sqrt(3.5 + 1e-5), 1e-5);
  EXPECT_EQ(batch.blobs()[2]->cpu_data()[0], Dtype(1));
}

TYPED_TEST(BatchNormLayerTest, GradientTrain) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  BatchNormLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(BatchNormLayerTest, GradientTrainTwoAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{5, 3});
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  LayerParameter param;
  BatchNormLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->top_vec_);
}

TYPED_TEST(BatchNormLayerTest, GradientGlobalStats) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_phase(TEST);
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype mean_sum[] = {0.3, -0.6, 0.1}, variance_sum[] = {1.5, 0.8, 3};
  std::copy(mean_sum, mean_sum + 3, layer.blobs()[0]->mutable_cpu_data());
  std::copy(variance_sum, variance_sum + 3, layer.blobs()[1]->mutable_cpu_data());
  layer.blobs()[2]->mutable_cpu_data()[0] = 1.5;
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

// NVCaffe's and OpenCV's scale_bias: blobs 3 and 4, a learned scale and bias
// per channel after the normalisation; their fillers (either alone turns it
// on in NVCaffe) give their first values.
TYPED_TEST(BatchNormLayerTest, ScaleBiasByHand) {
  using Dtype = typename TypeParam::Dtype;
  std::vector<Blob<Dtype>*> bottom_vec{this->small_.get()};
  LayerParameter param;
  param.set_phase(TEST);
  param.mutable_batch_norm_param()->set_scale_bias(true);
  param.mutable_batch_norm_param()->set_eps(0);
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 5u);
  EXPECT_EQ(layer.blobs()[3]->cpu_data()[1], Dtype(1));  // scale starts at 1
  EXPECT_EQ(layer.blobs()[4]->cpu_data()[1], Dtype(0));  // bias at 0
  // NVCaffe's stored statistics, its factor 1: mean (3, 2), variance (4, 16).
  const Dtype mean[] = {3, 2}, variance[] = {4, 16}, scale[] = {2, -0.5}, bias[] = {1, 10};
  for (int c = 0; c < 2; ++c) {
    layer.blobs()[0]->mutable_cpu_data()[c] = mean[c];
    layer.blobs()[1]->mutable_cpu_data()[c] = variance[c];
    layer.blobs()[3]->mutable_cpu_data()[c] = scale[c];
    layer.blobs()[4]->mutable_cpu_data()[c] = bias[c];
  }
  layer.blobs()[2]->mutable_cpu_data()[0] = 1;
  layer.Forward(bottom_vec, this->top_vec_);
  // [n][c][s] = 1, 2 | 0, 0 | 3, 6 | 4, 4.
  const Dtype expected[] = {2 * (1 - 3) / 2.0 + 1,   2 * (2 - 3) / 2.0 + 1,
                            -0.5 * (0 - 2) / 4 + 10, -0.5 * (0 - 2) / 4 + 10,
                            2 * (3 - 3) / 2.0 + 1,   2 * (6 - 3) / 2.0 + 1,
                            -0.5 * (4 - 2) / 4 + 10, -0.5 * (4 - 2) / 4 + 10};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(this->top_->cpu_data()[i], expected[i], 1e-6) << i;

  LayerParameter filled;
  FillerParameter* scale_filler = filled.mutable_batch_norm_param()->mutable_scale_filler();
  scale_filler->set_type("constant");
  scale_filler->set_value(3);
  BatchNormLayer<Dtype> with_filler(filled);
  with_filler.SetUp(bottom_vec, this->top_vec_);
  ASSERT_EQ(with_filler.blobs().size(), 5u);
  EXPECT_EQ(with_filler.blobs()[3]->cpu_data()[0], Dtype(3));
}

// The gradients of the input, the scale and the bias, with batch and with
// stored statistics (the statistics blobs take none).
TYPED_TEST(BatchNormLayerTest, ScaleBiasGradients) {
  using Dtype = typename TypeParam::Dtype;
  for (const Phase phase : {TRAIN, TEST}) {
    LayerParameter param;
    param.set_phase(phase);
    BatchNormParameter* bn = param.mutable_batch_norm_param();
    bn->set_scale_bias(true);
    bn->mutable_scale_filler()->set_type("uniform");
    bn->mutable_scale_filler()->set_min(0.5);
    bn->mutable_scale_filler()->set_max(1.5);
    bn->mutable_bias_filler()->set_type("gaussian");
    BatchNormLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    if (phase == TEST) {
      for (int c = 0; c < 3; ++c) {
        layer.blobs()[0]->mutable_cpu_data()[c] = Dtype(0.2) * c - Dtype(0.1);
        layer.blobs()[1]->mutable_cpu_data()[c] = Dtype(0.5) + c;
      }
      layer.blobs()[2]->mutable_cpu_data()[0] = 1;
    }
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
  }
}

// A 5-blob BatchNorm in a model (NVCaffe's scale_bias) loaded into a layer
// that does not ask for it says how to ask.
TYPED_TEST(BatchNormLayerTest, FiveBlobsWithoutScaleBiasSayHow) {
  LayerParameter param;
  for (int i = 0; i < 5; ++i) {
    BlobProto* blob = param.add_blobs();
    blob->mutable_shape()->add_dim(i == 2 ? 1 : 3);
    for (int k = 0; k < (i == 2 ? 1 : 3); ++k) blob->add_data(1);
  }
  this->ExpectSetUpError(param, "set batch_norm_param { scale_bias: true }");
}

// The gradient checker cannot run in place (the forward pass overwrites the
// values it perturbs), so in-place backward is held to the out-of-place one.
TYPED_TEST(BatchNormLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  Blob<Dtype> top_diff(this->bottom_->shape());
  GetFiller<Dtype>(filler_param)->Fill(&top_diff);
  for (const bool global : {false, true}) {
    LayerParameter param;
    param.mutable_batch_norm_param()->set_use_global_stats(global);
    BatchNormLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.blobs()[1]->mutable_cpu_data()[1] = 2;
    layer.blobs()[2]->mutable_cpu_data()[0] = 1;
    layer.Forward(this->bottom_vec_, this->top_vec_);
    cpu_copy(top_diff.count(), top_diff.cpu_data(), this->top_->mutable_cpu_diff());
    layer.Backward(this->top_vec_, {true}, this->bottom_vec_);

    Blob<Dtype> in_place;
    in_place.CopyFrom(*this->bottom_, false, true);
    std::vector<Blob<Dtype>*> in_place_vec{&in_place};
    BatchNormLayer<Dtype> layer_in_place(param);
    layer_in_place.SetUp(in_place_vec, in_place_vec);
    layer_in_place.blobs()[1]->mutable_cpu_data()[1] = 2;
    layer_in_place.blobs()[2]->mutable_cpu_data()[0] = 1;
    layer_in_place.Forward(in_place_vec, in_place_vec);
    for (int i = 0; i < in_place.count(); ++i) {
      EXPECT_NEAR(in_place.cpu_data()[i], this->top_->cpu_data()[i], 1e-5) << i;
    }
    cpu_copy(top_diff.count(), top_diff.cpu_data(), in_place.mutable_cpu_diff());
    layer_in_place.Backward(in_place_vec, {true}, in_place_vec);
    for (int i = 0; i < in_place.count(); ++i) {
      EXPECT_NEAR(in_place.cpu_diff()[i], this->bottom_->cpu_diff()[i], 1e-5)
          << (global ? "global " : "batch ") << i;
    }
  }
}

TYPED_TEST(BatchNormLayerTest, StatisticsAreFrozen) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.add_param()->set_lr_mult(0);  // the first given, the others added
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.layer_param().param_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(layer.layer_param().param(i).lr_mult(), 0) << i;
    EXPECT_FALSE(layer.param_propagate_down(i)) << i;
  }
  // Backward leaves the statistics' diffs alone.
  for (auto& blob : layer.blobs()) cpu_set(blob->count(), Dtype(7), blob->mutable_cpu_diff());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  cpu_set(this->top_->count(), Dtype(1), this->top_->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  for (auto& blob : layer.blobs()) EXPECT_EQ(blob->cpu_diff()[0], Dtype(7));
}

TYPED_TEST(BatchNormLayerTest, LearningRateOnStatisticsThrows) {
  LayerParameter param;
  param.add_param()->set_lr_mult(0);
  param.add_param()->set_lr_mult(1);
  this->ExpectSetUpError(param, "lr_mult 1");
  LayerParameter unset;
  unset.add_param();  // lr_mult defaults to 1
  this->ExpectSetUpError(unset, "lr_mult 1");
  LayerParameter too_many;
  for (int i = 0; i < 4; ++i) too_many.add_param()->set_lr_mult(0);
  this->ExpectSetUpError(too_many, "4 param specs");
}

TYPED_TEST(BatchNormLayerTest, ChannelMismatchThrows) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("bn2");
  BatchNormLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> four_channels(2, 4, 3, 2);
  std::vector<Blob<Dtype>*> bottom_vec{&four_channels};
  try {
    layer.Forward(bottom_vec, this->top_vec_);
    FAIL() << "a bottom with other channels must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bn2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 channels"), std::string::npos) << e.what();
  }
  // Statistics loaded for 4 channels do not fit 3.
  LayerParameter loaded;
  for (const int count : {4, 4, 1}) {
    BlobProto* blob = loaded.add_blobs();
    blob->mutable_shape()->add_dim(count);
    for (int i = 0; i < count; ++i) blob->add_data(1);
  }
  this->ExpectSetUpError(loaded, "do not fit 3 channels");
}

TYPED_TEST(BatchNormLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("BatchNorm");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "BatchNorm");
}

}  // namespace
}  // namespace crema
