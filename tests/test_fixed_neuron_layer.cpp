// FixedNeuron (Xilinx): the deployed quantisation by hand (rounding halves
// up, saturation at the bit width, the truncating follow_data_layer form,
// enable: false), the gradient passed straight through, and the TRAIN phase
// (Xilinx's calibration) refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crema/layers/fixed_neuron_layer.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class FixedNeuronLayerTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(FixedNeuronLayerTest, TestDtypesAndDevices);

LayerParameter FixedParam(const std::string& fixed, Phase phase = TEST) {
  LayerParameter param =
      ParseNet("layer { name: 'fix' type: 'FixedNeuron' fixed_param { " + fixed + " } }").layer(0);
  param.set_phase(phase);
  return param;
}

// Position 2 (step 1/4), 4 bits: the values lie in [-2, 1.75].
TYPED_TEST(FixedNeuronLayerTest, QuantisesAsTheDpu) {
  using Dtype = typename TypeParam::Dtype;
  const double x[] = {0.3, 0.375, -0.375, 0.125, -0.3, 5, -5, 1.7};
  const double rounded[] = {0.25, 0.5, -0.25, 0.25, -0.25, 1.75, -2, 1.75};
  const double truncated[] = {0.25, 0.25, -0.25, 0, -0.25, 5, -5, 1.5};
  Blob<Dtype> bottom(std::vector<int>{8}), top;
  for (int i = 0; i < 8; ++i) bottom.mutable_cpu_data()[i] = Dtype(x[i]);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  for (const bool follow : {false, true}) {
    FixedNeuronLayer<Dtype> layer(
        FixedParam(std::string("bit_width: 4 follow_data_layer: ") + (follow ? "true" : "false")));
    layer.SetUp(bottom_vec, top_vec);
    layer.blobs()[0]->mutable_cpu_data()[0] = Dtype(2.7);  // the floor, 2, is the position
    layer.Forward(bottom_vec, top_vec);
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(top.cpu_data()[i], Dtype(follow ? truncated[i] : rounded[i])) << x[i];
    }
    for (int i = 0; i < 8; ++i) top.mutable_cpu_diff()[i] = Dtype(i);
    layer.Backward(top_vec, {true}, bottom_vec);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(bottom.cpu_diff()[i], Dtype(i));  // straight through
  }
  FixedNeuronLayer<Dtype> off(FixedParam("enable: false"));
  off.SetUp(bottom_vec, top_vec);
  off.Forward(bottom_vec, top_vec);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(top.cpu_data()[i], bottom.cpu_data()[i]);
}

TYPED_TEST(FixedNeuronLayerTest, CalibrationAndBadWidthsAreRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{4}), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  FixedNeuronLayer<Dtype> training(FixedParam("bit_width: 8", TRAIN));
  ExpectSetUpThrowsNamingLayer<Dtype>(&training, bottom_vec, top_vec);
  FixedNeuronLayer<Dtype> zero(FixedParam("bit_width: 0"));
  ExpectSetUpThrowsNamingLayer<Dtype>(&zero, bottom_vec, top_vec);
}

}  // namespace
}  // namespace crema
