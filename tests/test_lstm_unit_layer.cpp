// LSTMUnit: forward values by hand, gradients of the previous cell state and
// the gate inputs against finite differences, and the shape checks.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/lstm_unit_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class LSTMUnitLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // N = 3 streams of D = 2 units; the second stream starts a new sequence.
  LSTMUnitLayerTest()
      : previous_cell_(new Blob<Dtype>(std::vector<int>{1, 3, 2})),
        gate_inputs_(new Blob<Dtype>(std::vector<int>{1, 3, 8})),
        cont_(new Blob<Dtype>(std::vector<int>{1, 3})),
        cell_(new Blob<Dtype>()),
        hidden_(new Blob<Dtype>()) {
    FillerParameter filler_param;
    filler_param.set_type("gaussian");
    GetFiller<Dtype>(filler_param)->Fill(previous_cell_.get());
    GetFiller<Dtype>(filler_param)->Fill(gate_inputs_.get());
    const Dtype cont[] = {1, 0, 1};
    std::copy(cont, cont + 3, cont_->mutable_cpu_data());
    bottom_vec_ = {previous_cell_.get(), gate_inputs_.get(), cont_.get()};
    top_vec_ = {cell_.get(), hidden_.get()};
  }
  std::unique_ptr<Blob<Dtype>> previous_cell_, gate_inputs_, cont_, cell_, hidden_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(LSTMUnitLayerTest, TestDtypesAndDevices);

TYPED_TEST(LSTMUnitLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  // D = 2, N = 1. Gate blocks: input, forget, output, candidate.
  const double previous_cell[] = {0.5, -1};
  const double gate_inputs[] = {0, 1, 2, -1, 0.5, 0, 1, -0.5};
  Blob<Dtype> c_prev(std::vector<int>{1, 1, 2}), gates(std::vector<int>{1, 1, 8}),
      cont(std::vector<int>{1, 1}), cell, hidden;
  std::copy(previous_cell, previous_cell + 2, c_prev.mutable_cpu_data());
  std::copy(gate_inputs, gate_inputs + 8, gates.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom{&c_prev, &gates, &cont}, top{&cell, &hidden};
  LSTMUnitLayer<Dtype> layer((LayerParameter()));
  layer.SetUp(bottom, top);
  for (double continued : {1.0, 0.0}) {
    cont.mutable_cpu_data()[0] = continued;
    layer.Forward(bottom, top);
    ASSERT_EQ(cell.shape(), std::vector<int>({1, 1, 2}));
    ASSERT_EQ(hidden.shape(), std::vector<int>({1, 1, 2}));
    for (int d = 0; d < 2; ++d) {
      const double input_gate = Sigmoid(gate_inputs[d]);
      const double forget_gate = Sigmoid(gate_inputs[2 + d]);
      const double output_gate = Sigmoid(gate_inputs[4 + d]);
      const double candidate = std::tanh(gate_inputs[6 + d]);
      const double expected_cell =
          continued * forget_gate * previous_cell[d] + input_gate * candidate;
      EXPECT_NEAR(cell.cpu_data()[d], expected_cell, 1e-6) << "cont " << continued << ", d " << d;
      EXPECT_NEAR(hidden.cpu_data()[d], output_gate * std::tanh(expected_cell), 1e-6)
          << "cont " << continued << ", d " << d;
    }
  }
  // Spot values: d = 0 with cont 1 is 0.8808 * 0.5 + 0.5 * tanh(1).
  cont.mutable_cpu_data()[0] = 1;
  layer.Forward(bottom, top);
  EXPECT_NEAR(cell.cpu_data()[0], 0.821196, 1e-5);
  EXPECT_NEAR(hidden.cpu_data()[0], 0.622459 * std::tanh(0.821196), 1e-5);
}

TYPED_TEST(LSTMUnitLayerTest, GradientPreviousCell) {
  using Dtype = typename TypeParam::Dtype;
  LSTMUnitLayer<Dtype> layer((LayerParameter()));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(LSTMUnitLayerTest, GradientGateInputs) {
  using Dtype = typename TypeParam::Dtype;
  LSTMUnitLayer<Dtype> layer((LayerParameter()));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 1);
}

TYPED_TEST(LSTMUnitLayerTest, ContHasNoGradient) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("unit3");
  LSTMUnitLayer<Dtype> layer(param);
  EXPECT_TRUE(layer.AllowForceBackward(0));
  EXPECT_TRUE(layer.AllowForceBackward(1));
  EXPECT_FALSE(layer.AllowForceBackward(2));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  try {
    layer.Backward(this->top_vec_, {false, false, true}, this->bottom_vec_);
    FAIL() << "a gradient for cont must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unit3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cont"), std::string::npos) << e.what();
  }
}

TYPED_TEST(LSTMUnitLayerTest, WrongShapesNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("unit7");
  Blob<Dtype> narrow_gates(std::vector<int>{1, 3, 6});
  Blob<Dtype> wrong_cont(std::vector<int>{3, 1});
  const std::vector<std::vector<Blob<Dtype>*>> bad_bottoms{
      {this->previous_cell_.get(), &narrow_gates, this->cont_.get()},
      {this->previous_cell_.get(), this->gate_inputs_.get(), &wrong_cont},
      {this->gate_inputs_.get(), this->gate_inputs_.get(), this->cont_.get()}};
  for (const auto& bottom : bad_bottoms) {
    LSTMUnitLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom, this->top_vec_);
      FAIL() << "wrong bottom shapes must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("unit7"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("LSTMUnit"), std::string::npos) << e.what();
    }
  }
}

TYPED_TEST(LSTMUnitLayerTest, InPlaceIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("unit8");
  LSTMUnitLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, {this->previous_cell_.get(), this->hidden_.get()});
    FAIL() << "c_t in place of c_{t-1} must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unit8"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in place"), std::string::npos) << e.what();
  }
}

TYPED_TEST(LSTMUnitLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("LSTMUnit");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "LSTMUnit");
}

}  // namespace
}  // namespace crema
