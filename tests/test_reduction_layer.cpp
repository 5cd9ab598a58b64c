// Reduction: forward values by hand for every operation on both kinds of
// axis, a naive reference for a negative axis, gradients of every operation
// against finite differences, and refusal of an axis out of range.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/reduction_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class ReductionLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  ReductionLayerTest()
      : bottom_(new Blob<Dtype>(std::vector<int>{2, 3, 4})), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }

  static LayerParameter Param(ReductionParameter::ReductionOp operation, int axis, float coeff) {
    LayerParameter param;
    param.mutable_reduction_param()->set_operation(operation);
    param.mutable_reduction_param()->set_axis(axis);
    param.mutable_reduction_param()->set_coeff(coeff);
    return param;
  }

  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(ReductionLayerTest, TestDtypesAndDevices);

const ReductionParameter::ReductionOp kAllOperations[] = {
    ReductionParameter::SUM, ReductionParameter::ASUM, ReductionParameter::SUMSQ,
    ReductionParameter::MEAN};

TYPED_TEST(ReductionLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3}), top;
  const Dtype input[] = {1, -2, 3, -4, 5, -6};
  std::copy(input, input + 6, bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  struct Case {
    ReductionParameter::ReductionOp operation;
    int axis;
    float coeff;
    std::vector<Dtype> expected;
  };
  const std::vector<Case> cases = {
      {ReductionParameter::SUM, 0, 1, {-3}},     {ReductionParameter::ASUM, 0, 1, {21}},
      {ReductionParameter::SUMSQ, 0, 1, {91}},   {ReductionParameter::MEAN, 0, 1, {-0.5}},
      {ReductionParameter::SUM, 0, 2, {-6}},     {ReductionParameter::SUM, 1, 1, {2, -5}},
      {ReductionParameter::ASUM, 1, 1, {6, 15}}, {ReductionParameter::SUMSQ, 1, -0.5, {-7, -38.5}},
      {ReductionParameter::MEAN, 1, 3, {2, -5}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("operation " + std::to_string(c.operation) + ", axis " + std::to_string(c.axis) +
                 ", coeff " + std::to_string(c.coeff));
    ReductionLayer<Dtype> layer(this->Param(c.operation, c.axis, c.coeff));
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    ASSERT_EQ(top.num_axes(), c.axis);
    ASSERT_EQ(top.count(), static_cast<int>(c.expected.size()));
    for (int i = 0; i < top.count(); ++i) EXPECT_NEAR(top.cpu_data()[i], c.expected[i], 1e-5) << i;
  }
}

TYPED_TEST(ReductionLayerTest, NegativeAxisMatchesNaiveLoop) {
  using Dtype = typename TypeParam::Dtype;
  for (const auto operation : kAllOperations) {
    SCOPED_TRACE("operation " + std::to_string(operation));
    ReductionLayer<Dtype> layer(this->Param(operation, -1, 0.5));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    ASSERT_EQ(this->top_->shape(), (std::vector<int>{2, 3}));
    const Dtype* x = this->bottom_->cpu_data();
    for (int i = 0; i < 6; ++i) {
      double expected = 0;
      for (int j = 0; j < 4; ++j) {
        const double value = x[i * 4 + j];
        if (operation == ReductionParameter::ASUM) {
          expected += std::fabs(value);
        } else if (operation == ReductionParameter::SUMSQ) {
          expected += value * value;
        } else {
          expected += value;
        }
      }
      if (operation == ReductionParameter::MEAN) expected /= 4;
      EXPECT_NEAR(this->top_->cpu_data()[i], 0.5 * expected, 1e-5) << i;
    }
  }
}

TYPED_TEST(ReductionLayerTest, BackwardOverwritesBottomDiff) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 2}), top;
  const Dtype input[] = {1, -2, 0, 3};
  std::copy(input, input + 4, bottom.mutable_cpu_data());
  cpu_set(4, Dtype(100), bottom.mutable_cpu_diff());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  ReductionLayer<Dtype> layer(this->Param(ReductionParameter::ASUM, 1, 2));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  top.mutable_cpu_diff()[0] = 1;
  top.mutable_cpu_diff()[1] = -3;
  layer.Backward(top_vec, {true}, bottom_vec);
  // coeff * top_diff[row] * sign(x), with sign(0) = 0.
  const Dtype expected[] = {2, -2, 0, -6};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(ReductionLayerTest, GradientEveryOperationAndAxis) {
  using Dtype = typename TypeParam::Dtype;
  for (const auto operation : kAllOperations) {
    for (int axis : {0, 1}) {
      SCOPED_TRACE("operation " + std::to_string(operation) + ", axis " + std::to_string(axis));
      ReductionLayer<Dtype> layer(this->Param(operation, axis, 1.5));
      // |x| has a kink at 0: skip elements a step could carry across it.
      const Dtype kink_range = operation == ReductionParameter::ASUM ? Dtype(1e-2) : Dtype(-1);
      GradientChecker<Dtype> checker(1e-2, 1e-3, 1701, 0, kink_range);
      checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
    }
  }
}

TYPED_TEST(ReductionLayerTest, AxisOutOfRangeNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  for (int axis : {3, -4}) {
    LayerParameter param = this->Param(ReductionParameter::SUM, axis, 1);
    param.set_name("reduce1");
    ReductionLayer<Dtype> layer(param);
    try {
      layer.SetUp(this->bottom_vec_, this->top_vec_);
      FAIL() << "axis " << axis << " must be refused for a 3-D bottom";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("reduce1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("Reduction"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("axis"), std::string::npos) << e.what();
    }
  }
}

TYPED_TEST(ReductionLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Reduction");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Reduction");
}

}  // namespace
}  // namespace crema
