// Dropout: at TRAIN the dropped fraction is about the ratio and kept values are
// scaled, backward reuses the forward mask, the same seed gives the same mask; at
// TEST it passes through; gradients against finite differences with a fixed
// seed; in place; refusal of bad ratios; the forks' scale_train: false; on
// every device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/dropout_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class DropoutLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  DropoutLayerTest() : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()) {
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
TYPED_TEST_SUITE(DropoutLayerTest, TestDtypesAndDevices);

LayerParameter DropoutParam(float ratio, Phase phase) {
  LayerParameter param;
  param.set_name("drop1");
  param.set_type("Dropout");
  param.set_phase(phase);
  param.mutable_dropout_param()->set_dropout_ratio(ratio);
  return param;
}

// A large blob with values in [1, 2], so a zero in the output means dropped.
template <typename Dtype>
void FillAwayFromZero(Blob<Dtype>* blob) {
  blob->Reshape(std::vector<int>{40, 100});
  FillerParameter filler_param;
  filler_param.set_type("uniform");
  filler_param.set_min(1);
  filler_param.set_max(2);
  GetFiller<Dtype>(filler_param)->Fill(blob);
}

TYPED_TEST(DropoutLayerTest, TrainDropsAboutTheRatioAndScalesKeptValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillAwayFromZero(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  for (const float ratio : {0.2f, 0.5f, 0.8f}) {
    DropoutLayer<Dtype> layer(DropoutParam(ratio, TRAIN));
    layer.SetUp(bottom_vec, top_vec);
    Context::set_random_seed(1701);
    layer.Forward(bottom_vec, top_vec);
    int dropped = 0;
    for (int i = 0; i < bottom.count(); ++i) {
      const Dtype y = top.cpu_data()[i];
      if (y == 0) {
        ++dropped;
      } else {
        EXPECT_NEAR(y, bottom.cpu_data()[i] / (1 - ratio), 1e-5 * y)
            << "ratio " << ratio << ", " << i;
      }
    }
    EXPECT_NEAR(static_cast<double>(dropped) / bottom.count(), ratio, 0.05) << "ratio " << ratio;
  }
}

TYPED_TEST(DropoutLayerTest, DefaultRatioIsHalf) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillAwayFromZero(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param;
  param.set_phase(TRAIN);
  DropoutLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  Context::set_random_seed(1701);
  layer.Forward(bottom_vec, top_vec);
  int dropped = 0;
  for (int i = 0; i < bottom.count(); ++i) {
    if (top.cpu_data()[i] == 0) {
      ++dropped;
    } else {
      EXPECT_NEAR(top.cpu_data()[i], 2 * bottom.cpu_data()[i], 1e-5) << i;
    }
  }
  EXPECT_NEAR(static_cast<double>(dropped) / bottom.count(), 0.5, 0.05);
}

TYPED_TEST(DropoutLayerTest, BackwardReusesTheForwardMask) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillAwayFromZero(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  DropoutLayer<Dtype> layer(DropoutParam(0.25, TRAIN));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  cpu_set(top.count(), Dtype(1), top.mutable_cpu_diff());
  layer.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  for (int i = 0; i < bottom.count(); ++i) {
    const Dtype expected = top.cpu_data()[i] == 0 ? Dtype(0) : Dtype(1) / Dtype(0.75);
    EXPECT_NEAR(bottom.cpu_diff()[i], expected, 1e-6) << i;
  }
}

TYPED_TEST(DropoutLayerTest, SameSeedGivesTheSameMask) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(DropoutParam(0.5, TRAIN));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const int count = this->bottom_->count();
  auto forward_with_seed = [&](uint64_t seed) {
    Context::set_random_seed(seed);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    return std::vector<Dtype>(this->top_->cpu_data(), this->top_->cpu_data() + count);
  };
  const std::vector<Dtype> first = forward_with_seed(5);
  EXPECT_EQ(forward_with_seed(5), first);
  EXPECT_NE(forward_with_seed(6), first);
}

TYPED_TEST(DropoutLayerTest, TestPassesThrough) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(DropoutParam(0.5, TEST));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int count = this->bottom_->count();
  for (int i = 0; i < count; ++i)
    EXPECT_EQ(this->top_->cpu_data()[i], this->bottom_->cpu_data()[i]);
  for (int i = 0; i < count; ++i) this->top_->mutable_cpu_diff()[i] = Dtype(0.1) * (i % 7);
  layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  for (int i = 0; i < count; ++i)
    EXPECT_EQ(this->bottom_->cpu_diff()[i], this->top_->cpu_diff()[i]);
}

// SegNet's sample_weights_test (Bayesian SegNet): TEST drops and scales as
// TRAIN does, each forward with new draws, and backward reuses the mask.
TYPED_TEST(DropoutLayerTest, SampleWeightsTestDropsAtTest) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top, first;
  FillAwayFromZero(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter param = DropoutParam(0.5, TEST);
  param.mutable_dropout_param()->set_sample_weights_test(true);
  DropoutLayer<Dtype> layer(param);
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  first.CopyFrom(top, false, true);
  int dropped = 0;
  for (int i = 0; i < bottom.count(); ++i) {
    const Dtype y = top.cpu_data()[i];
    if (y == 0) {
      ++dropped;
    } else {
      EXPECT_NEAR(y, 2 * bottom.cpu_data()[i], 1e-5 * y) << i;
    }
    top.mutable_cpu_diff()[i] = 1;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / bottom.count(), 0.5, 0.05);
  layer.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  for (int i = 0; i < bottom.count(); ++i) {
    EXPECT_EQ(bottom.cpu_diff()[i], top.cpu_data()[i] == 0 ? Dtype(0) : Dtype(2)) << i;
  }
  layer.Forward(bottom_vec, top_vec);
  int differ = 0;
  for (int i = 0; i < bottom.count(); ++i) differ += top.cpu_data()[i] != first.cpu_data()[i];
  EXPECT_GT(differ, 0) << "each sample draws anew";
}

// py-faster-rcnn's scale_train: false (ZF's fc6 and fc7 in its published
// test.prototxt): TRAIN keeps values unscaled, TEST multiplies by 1 - ratio,
// forward and backward; the gradient checks hold in both phases.
TYPED_TEST(DropoutLayerTest, ScaleTrainFalseScalesAtTestInstead) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom, top;
  FillAwayFromZero(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LayerParameter train = DropoutParam(0.3, TRAIN);
  train.mutable_dropout_param()->set_scale_train(false);
  DropoutLayer<Dtype> train_layer(train);
  train_layer.SetUp(bottom_vec, top_vec);
  train_layer.Forward(bottom_vec, top_vec);
  int dropped = 0;
  for (int i = 0; i < bottom.count(); ++i) {
    const Dtype y = top.cpu_data()[i];
    if (y == 0) {
      ++dropped;
    } else {
      EXPECT_EQ(y, bottom.cpu_data()[i]) << i;
    }
  }
  EXPECT_NEAR(static_cast<double>(dropped) / bottom.count(), 0.3, 0.05);
  cpu_set(top.count(), Dtype(1), top.mutable_cpu_diff());
  train_layer.Backward(top_vec, std::vector<bool>{true}, bottom_vec);
  for (int i = 0; i < bottom.count(); ++i) {
    EXPECT_EQ(bottom.cpu_diff()[i], top.cpu_data()[i] == 0 ? Dtype(0) : Dtype(1)) << i;
  }
  LayerParameter test = DropoutParam(0.3, TEST);
  test.mutable_dropout_param()->set_scale_train(false);
  DropoutLayer<Dtype> test_layer(test);
  test_layer.SetUp(bottom_vec, top_vec);
  test_layer.Forward(bottom_vec, top_vec);
  for (int i = 0; i < bottom.count(); ++i) {
    EXPECT_NEAR(top.cpu_data()[i], bottom.cpu_data()[i] * Dtype(0.7), 1e-6) << i;
  }
  for (const Phase phase : {TRAIN, TEST}) {
    LayerParameter param = DropoutParam(0.5, phase);
    param.mutable_dropout_param()->set_scale_train(false);
    DropoutLayer<Dtype> layer(param);
    GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
    checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(DropoutLayerTest, ZeroRatioKeepsEverythingAtTrain) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(DropoutParam(0, TRAIN));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->bottom_->count(); ++i) {
    EXPECT_EQ(this->top_->cpu_data()[i], this->bottom_->cpu_data()[i]) << i;
  }
}

TYPED_TEST(DropoutLayerTest, GradientAtTrain) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(DropoutParam(0.5, TRAIN));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(DropoutLayerTest, GradientAtTest) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(DropoutParam(0.5, TEST));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(DropoutLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  ExpectInPlaceMatchesOutOfPlace<Dtype>(DropoutParam(0.4, TRAIN), *this->bottom_);
}

TYPED_TEST(DropoutLayerTest, RatioOutsideZeroToOneRefused) {
  using Dtype = typename TypeParam::Dtype;
  for (const float ratio : {1.f, 1.5f, -0.1f}) {
    DropoutLayer<Dtype> layer(DropoutParam(ratio, TRAIN));
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(DropoutLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Dropout");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Dropout");
}

}  // namespace
}  // namespace crema
