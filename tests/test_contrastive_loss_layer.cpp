// ContrastiveLoss: the loss by hand (current and legacy forms, another
// margin), gradients to both feature bottoms with the pair labels fixed, and
// mismatched bottoms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/contrastive_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ContrastiveLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Pair 0 similar at squared distance 0.25; pair 1 dissimilar at distance 0.2
  // (inside the margin 1); pair 2 dissimilar at distance 2 (outside it).
  ContrastiveLossLayerTest()
      : a_(3, 2, 1, 1),
        b_(3, 2, 1, 1),
        similar_(3, 1, 1, 1),
        bottom_vec_{&a_, &b_, &similar_},
        top_vec_{&loss_} {
    SetValues(&a_, {0, 0, 1, 1, 0, 0});
    SetValues(&b_, {0.3, 0.4, 1, 1.2, 2, 0});
    SetValues(&similar_, {1, 0, 0});
  }
  Dtype LossWith(const LayerParameter& param) {
    ContrastiveLossLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    return layer.Forward(bottom_vec_, top_vec_);
  }
  // Four pairs of 3-D features whose distances (0.5, 0.4, 1.6, 0.7) stay
  // clear of the margin 1 (and of its square, for the legacy form).
  void MakeRandom() {
    a_.Reshape(4, 3, 1, 1);
    b_.Reshape(4, 3, 1, 1);
    similar_.Reshape(4, 1, 1, 1);
    std::mt19937 rng(1701);
    std::normal_distribution<double> gaussian(0.0, 1.0);
    const double distances[] = {0.5, 0.4, 1.6, 0.7};
    for (int i = 0; i < 4; ++i) {
      double direction[3], norm = 0;
      for (double& d : direction) {
        d = gaussian(rng);
        norm += d * d;
      }
      for (int k = 0; k < 3; ++k) {
        const double a = gaussian(rng);
        a_.mutable_cpu_data()[i * 3 + k] = Dtype(a);
        b_.mutable_cpu_data()[i * 3 + k] = Dtype(a + distances[i] * direction[k] / std::sqrt(norm));
      }
    }
    SetValues(&similar_, {1, 0, 0, 0});
  }
  void CheckGradientOfBothFeatures(const LayerParameter& param) {
    MakeRandom();
    for (int bottom : {0, 1}) {
      ContrastiveLossLayer<Dtype> layer(param);
      GradientChecker<Dtype> checker(1e-2, 1e-3);
      checker.CheckGradient(&layer, bottom_vec_, top_vec_, bottom);
    }
  }
  Blob<Dtype> a_, b_, similar_, loss_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ContrastiveLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(ContrastiveLossLayerTest, ForwardByHand) {
  // (0.25 + (1 - 0.2)^2 + 0) / (2 * 3)
  EXPECT_NEAR(this->LossWith(LayerParameter()), (0.25 + 0.64) / 6, 1e-6);
  EXPECT_EQ(this->loss_.num_axes(), 0);
}

TYPED_TEST(ContrastiveLossLayerTest, ForwardByHandLegacy) {
  LayerParameter param;
  param.mutable_contrastive_loss_param()->set_legacy_version(true);
  // (0.25 + max(1 - 0.04, 0) + max(1 - 4, 0)) / (2 * 3)
  EXPECT_NEAR(this->LossWith(param), (0.25 + 0.96) / 6, 1e-6);
}

TYPED_TEST(ContrastiveLossLayerTest, ForwardByHandOtherMargin) {
  LayerParameter param;
  param.mutable_contrastive_loss_param()->set_margin(3);
  // (0.25 + (3 - 0.2)^2 + (3 - 2)^2) / (2 * 3)
  EXPECT_NEAR(this->LossWith(param), (0.25 + 7.84 + 1) / 6, 1e-5);
}

TYPED_TEST(ContrastiveLossLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ContrastiveLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  layer.Backward(this->top_vec_, {true, true, false}, this->bottom_vec_);
  // Similar: (a - b) / N. Dissimilar inside the margin:
  // -(margin - dist) (a - b) / (N (dist + 1e-4)). Outside: 0.
  const double shrink = -(1 - 0.2) / (3 * (0.2 + 1e-4));
  const double expected[] = {-0.3 / 3, -0.4 / 3, 0, -0.2 * shrink, 0, 0};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(this->a_.cpu_diff()[i], expected[i], 1e-5) << i;
    EXPECT_NEAR(this->b_.cpu_diff()[i], -expected[i], 1e-5) << i;
  }
}

TYPED_TEST(ContrastiveLossLayerTest, GradientOfBothFeatures) {
  this->CheckGradientOfBothFeatures(LayerParameter());
}

TYPED_TEST(ContrastiveLossLayerTest, GradientOfBothFeaturesLegacy) {
  LayerParameter param;
  param.mutable_contrastive_loss_param()->set_legacy_version(true);
  this->CheckGradientOfBothFeatures(param);
}

TYPED_TEST(ContrastiveLossLayerTest, MismatchedBottomsNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("siamese");
  this->b_.Reshape(3, 3, 1, 1);
  ContrastiveLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "features of 2 and 3 dimensions must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("siamese"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ContrastiveLoss"), std::string::npos) << e.what();
  }
  this->b_.Reshape(3, 2, 1, 1);
  this->similar_.Reshape(2, 1, 1, 1);
  ContrastiveLossLayer<Dtype> labels(param);
  EXPECT_THROW(labels.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

TYPED_TEST(ContrastiveLossLayerTest, RefusesGradientToPairLabels) {
  using Dtype = typename TypeParam::Dtype;
  ContrastiveLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true, true}, this->bottom_vec_), Error);
  EXPECT_TRUE(layer.AllowForceBackward(1));
  EXPECT_FALSE(layer.AllowForceBackward(2));
}

TYPED_TEST(ContrastiveLossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("ContrastiveLoss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "ContrastiveLoss");
}

// Caffe read any non-zero integer part as "similar": 0.5 passed as a
// dissimilar pair and -1 as a similar one, silently.
TYPED_TEST(ContrastiveLossLayerTest, PairLabelNeitherZeroNorOneNamesTheValue) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("siamese");
  for (Dtype bad : {Dtype(0.5), Dtype(-1), Dtype(2)}) {
    this->similar_.mutable_cpu_data()[1] = bad;
    ContrastiveLossLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    try {
      layer.Forward(this->bottom_vec_, this->top_vec_);
      ADD_FAILURE() << "pair label " << bad << " must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("layer 'siamese'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("of item 1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace crema
