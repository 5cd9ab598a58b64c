// Eltwise: PROD, SUM (with and without coeffs) and MAX by hand, MAX routing
// its gradient to the winner (the first bottom on ties), gradients of every
// operation against finite differences, and the configurations it refuses.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/eltwise_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter EltwiseParam(EltwiseParameter::EltwiseOp operation,
                            const std::vector<float>& coeffs = {}) {
  LayerParameter param;
  param.set_name("merge");
  param.set_type("Eltwise");
  param.mutable_eltwise_param()->set_operation(operation);
  for (float coeff : coeffs) param.mutable_eltwise_param()->add_coeff(coeff);
  return param;
}

template <typename TypeParam>
class EltwiseLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Three 2 x 2 bottoms; the last element ties between bottoms 0 and 1.
  EltwiseLayerTest() {
    const Dtype values[3][4] = {{1, -2, 3, 0.5}, {2, 4, -1, 0.5}, {-1, 3, 2, 0.25}};
    for (int i = 0; i < 3; ++i) {
      small_[i].Reshape(std::vector<int>{2, 2});
      std::copy(values[i], values[i] + 4, small_[i].mutable_cpu_data());
      small_vec_.push_back(&small_[i]);
    }
    top_vec_ = {&top_};
  }
  std::vector<Dtype> Forward(const LayerParameter& param) {
    EltwiseLayer<Dtype> layer(param);
    layer.SetUp(small_vec_, top_vec_);
    layer.Forward(small_vec_, top_vec_);
    EXPECT_EQ(top_.shape(), (std::vector<int>{2, 2}));
    return std::vector<Dtype>(top_.cpu_data(), top_.cpu_data() + top_.count());
  }
  // Gradient check on three 2 x 3 x 2 x 2 bottoms filled by fill(bottom index, blob).
  template <typename Fill>
  void CheckGradient(const LayerParameter& param, Fill fill) {
    Blob<Dtype> bottoms[3];
    std::vector<Blob<Dtype>*> bottom_vec;
    for (int i = 0; i < 3; ++i) {
      bottoms[i].Reshape(2, 3, 2, 2);
      fill(i, &bottoms[i]);
      bottom_vec.push_back(&bottoms[i]);
    }
    EltwiseLayer<Dtype> layer(param);
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, bottom_vec, top_vec_);
  }
  static void FillUniform(Blob<Dtype>* blob, float min, float max) {
    FillerParameter filler_param;
    filler_param.set_type("uniform");
    filler_param.set_min(min);
    filler_param.set_max(max);
    GetFiller<Dtype>(filler_param)->Fill(blob);
  }
  Blob<Dtype> small_[3];
  Blob<Dtype> top_;
  std::vector<Blob<Dtype>*> small_vec_, top_vec_;
};
TYPED_TEST_SUITE(EltwiseLayerTest, TestDtypesAndDevices);

TYPED_TEST(EltwiseLayerTest, ProductByHand) {
  const auto top = this->Forward(EltwiseParam(EltwiseParameter::PROD));
  const double expected[] = {-2, -24, -6, 0.0625};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;
}

TYPED_TEST(EltwiseLayerTest, SumByHand) {
  const auto top = this->Forward(EltwiseParam(EltwiseParameter::SUM));
  const double expected[] = {2, 5, 4, 1.25};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;
  LayerParameter param;
  param.set_name("merge");  // SUM is the default operation
  const auto default_top = this->Forward(param);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(default_top[i], expected[i], 1e-6) << i;
}

TYPED_TEST(EltwiseLayerTest, WeightedSumByHand) {
  const auto top = this->Forward(EltwiseParam(EltwiseParameter::SUM, {1, -2, 0.5}));
  const double expected[] = {-3.5, -8.5, 6, -0.375};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(top[i], expected[i], 1e-6) << i;
}

TYPED_TEST(EltwiseLayerTest, MaxByHandAndGradientToTheWinner) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(EltwiseParam(EltwiseParameter::MAX));
  layer.SetUp(this->small_vec_, this->top_vec_);
  layer.Forward(this->small_vec_, this->top_vec_);
  const Dtype expected[] = {2, 4, 3, 0.5};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(this->top_.cpu_data()[i], expected[i]) << i;
  const Dtype top_diff[] = {10, 20, 30, 40};
  std::copy(top_diff, top_diff + 4, this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, std::vector<bool>(3, true), this->small_vec_);
  // Element 3 ties between bottoms 0 and 1: the first one takes it.
  const Dtype expected_diff[3][4] = {{0, 0, 30, 40}, {10, 20, 0, 0}, {0, 0, 0, 0}};
  for (int b = 0; b < 3; ++b) {
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(this->small_[b].cpu_diff()[i], expected_diff[b][i]) << b << ":" << i;
    }
  }
}

TYPED_TEST(EltwiseLayerTest, WeightedSumBackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(EltwiseParam(EltwiseParameter::SUM, {1, -2, 0.5}));
  layer.SetUp(this->small_vec_, this->top_vec_);
  layer.Forward(this->small_vec_, this->top_vec_);
  cpu_set(4, Dtype(2), this->top_.mutable_cpu_diff());
  cpu_set(4, Dtype(99), this->small_[1].mutable_cpu_diff());
  layer.Backward(this->top_vec_, std::vector<bool>{true, false, true}, this->small_vec_);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(this->small_[0].cpu_diff()[i], 2) << i;
    EXPECT_EQ(this->small_[1].cpu_diff()[i], 99) << i;  // not asked for: untouched
    EXPECT_EQ(this->small_[2].cpu_diff()[i], 1) << i;
  }
}

TYPED_TEST(EltwiseLayerTest, GradientSum) {
  using Dtype = typename TypeParam::Dtype;
  this->CheckGradient(EltwiseParam(EltwiseParameter::SUM),
                      [](int, Blob<Dtype>* blob) { TestFixture::FillUniform(blob, -1, 1); });
}

TYPED_TEST(EltwiseLayerTest, GradientWeightedSum) {
  using Dtype = typename TypeParam::Dtype;
  this->CheckGradient(EltwiseParam(EltwiseParameter::SUM, {0.5, -1.5, 2}),
                      [](int, Blob<Dtype>* blob) { TestFixture::FillUniform(blob, -1, 1); });
}

TYPED_TEST(EltwiseLayerTest, GradientStableProduct) {
  using Dtype = typename TypeParam::Dtype;
  this->CheckGradient(EltwiseParam(EltwiseParameter::PROD),
                      [](int, Blob<Dtype>* blob) { TestFixture::FillUniform(blob, -1.5, 1.5); });
}

// top / bottom is only right away from 0, so the bottoms stay there.
TYPED_TEST(EltwiseLayerTest, GradientUnstableProduct) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = EltwiseParam(EltwiseParameter::PROD);
  param.mutable_eltwise_param()->set_stable_prod_grad(false);
  this->CheckGradient(param,
                      [](int, Blob<Dtype>* blob) { TestFixture::FillUniform(blob, 0.5, 1.5); });
}

// The bottoms differ by at least 0.1 at every element, far more than the
// finite-difference step, so no probe crosses a kink of the maximum.
TYPED_TEST(EltwiseLayerTest, GradientMax) {
  using Dtype = typename TypeParam::Dtype;
  this->CheckGradient(EltwiseParam(EltwiseParameter::MAX), [](int bottom, Blob<Dtype>* blob) {
    for (int j = 0; j < blob->count(); ++j) {
      blob->mutable_cpu_data()[j] = Dtype(0.1) * ((j * 7 + bottom * 5) % 17) - Dtype(0.8);
    }
  });
}

TYPED_TEST(EltwiseLayerTest, RefusesCoeffCountMismatch) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(EltwiseParam(EltwiseParameter::SUM, {1, 2}));
  ExpectSetUpError(&layer, this->small_vec_, this->top_vec_, "got 2 coeffs for 3 bottoms");
  EltwiseLayer<Dtype> product(EltwiseParam(EltwiseParameter::PROD, {1, 2, 3}));
  ExpectSetUpError(&product, this->small_vec_, this->top_vec_, "only for the SUM operation");
}

TYPED_TEST(EltwiseLayerTest, RefusesMismatchedShapes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> other(std::vector<int>{2, 3});
  std::vector<Blob<Dtype>*> bottom{&this->small_[0], &other};
  EltwiseLayer<Dtype> layer(EltwiseParam(EltwiseParameter::SUM));
  ExpectSetUpError(&layer, bottom, this->top_vec_,
                   "bottom 1 has shape 2 3 (6) and bottom 0 has shape 2 2 (4)");
  std::vector<Blob<Dtype>*> one_bottom{&this->small_[0]};
  EltwiseLayer<Dtype> lonely(EltwiseParam(EltwiseParameter::SUM));
  ExpectSetUpError(&lonely, one_bottom, this->top_vec_, "at least 2 bottom blobs");
}

TYPED_TEST(EltwiseLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(EltwiseParam(EltwiseParameter::MAX))->type(),
               "Eltwise");
}

#ifdef NDEBUG  // protobuf's setter asserts on an unknown value in debug builds
// No file can hold an unknown operation (the parsers refuse or drop it), but
// a parameter built in code can: SetUp refuses it rather than Forward aborting.
TYPED_TEST(EltwiseLayerTest, RefusesAnUnknownOperation) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(EltwiseParam(static_cast<EltwiseParameter::EltwiseOp>(7)));
  try {
    layer.SetUp(this->small_vec_, this->top_vec_);
    FAIL() << "operation 7 must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'merge' (Eltwise): unknown operation 7"),
              std::string::npos)
        << e.what();
  }
}
#endif

}  // namespace
}  // namespace crema
