// LSTM: shapes and parameter order, several steps against a plain loop
// (gate order i, f, o, g), sequence resets and state carried between batches
// or through exposed states, gradients against finite differences, and user
// errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/lstm_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// h for the equations of lstm_layer.hpp by plain loops, from the given
// initial states (null: zeros).
template <typename Dtype>
std::vector<double> ReferenceLSTM(const Blob<Dtype>& x, const Blob<Dtype>& cont,
                                  const Blob<Dtype>* x_static, const Blob<Dtype>* h0,
                                  const Blob<Dtype>* c0,
                                  const std::vector<std::shared_ptr<Blob<Dtype>>>& blobs) {
  const int steps = x.shape(0), streams = x.shape(1), inputs = x.count(2);
  const int hidden = blobs[1]->count() / 4;
  const int static_inputs = x_static ? x_static->count(1) : 0;
  const Dtype* w_xc = blobs[0]->cpu_data();
  const Dtype* b_c = blobs[1]->cpu_data();
  const Dtype* w_static = x_static ? blobs[2]->cpu_data() : nullptr;
  const Dtype* w_hc = blobs[x_static ? 3 : 2]->cpu_data();
  std::vector<double> h(streams * hidden, 0), c(streams * hidden, 0), output;
  if (h0) h.assign(h0->cpu_data(), h0->cpu_data() + h0->count());
  if (c0) c.assign(c0->cpu_data(), c0->cpu_data() + c0->count());
  for (int t = 0; t < steps; ++t) {
    std::vector<double> new_h(streams * hidden), new_c(streams * hidden);
    for (int n = 0; n < streams; ++n) {
      const Dtype* x_tn = x.cpu_data() + (t * streams + n) * inputs;
      const double cont_tn = cont.cpu_data()[t * streams + n];
      std::vector<double> gate_input(4 * hidden);
      for (int j = 0; j < 4 * hidden; ++j) {
        double sum = b_c[j];
        for (int i = 0; i < inputs; ++i) sum += w_xc[j * inputs + i] * x_tn[i];
        for (int i = 0; i < static_inputs; ++i) {
          sum += w_static[j * static_inputs + i] * x_static->cpu_data()[n * static_inputs + i];
        }
        for (int k = 0; k < hidden; ++k) sum += w_hc[j * hidden + k] * cont_tn * h[n * hidden + k];
        gate_input[j] = sum;
      }
      for (int d = 0; d < hidden; ++d) {
        const double input_gate = Sigmoid(gate_input[d]);
        const double forget_gate = Sigmoid(gate_input[hidden + d]);
        const double output_gate = Sigmoid(gate_input[2 * hidden + d]);
        const double candidate = std::tanh(gate_input[3 * hidden + d]);
        const int index = n * hidden + d;
        new_c[index] = cont_tn * forget_gate * c[index] + input_gate * candidate;
        new_h[index] = output_gate * std::tanh(new_c[index]);
      }
    }
    h = new_h;
    c = new_c;
    output.insert(output.end(), h.begin(), h.end());
  }
  return output;
}

void ExpectErrorNamingLstm(const std::function<void()>& action, const std::string& what) {
  try {
    action();
    FAIL() << "expected an error about " << what;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("lstm1"), std::string::npos) << message;
    EXPECT_NE(message.find("LSTM"), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

template <typename TypeParam>
class LSTMLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  static constexpr int kHidden = 3;

  // T = 3 steps of N = 2 streams with 3 inputs; stream 1 starts a new
  // sequence at t = 1.
  LSTMLayerTest()
      : x_(std::vector<int>{3, 2, 3}),
        cont_(std::vector<int>{3, 2}),
        x_static_(std::vector<int>{2, 2}),
        h0_(std::vector<int>{1, 2, kHidden}),
        c0_(std::vector<int>{1, 2, kHidden}) {
    Context::set_random_seed(1701);
    FillGaussian(&x_);
    FillGaussian(&x_static_);
    FillGaussian(&h0_);
    FillGaussian(&c0_);
    SetValues(&cont_, {0, 0, 1, 0, 1, 1});
  }

  static LayerParameter Param(bool expose_hidden = false) {
    LayerParameter param;
    param.set_name("lstm1");
    param.set_type("LSTM");
    RecurrentParameter* recurrent = param.mutable_recurrent_param();
    recurrent->set_num_output(kHidden);
    recurrent->set_expose_hidden(expose_hidden);
    for (FillerParameter* filler :
         {recurrent->mutable_weight_filler(), recurrent->mutable_bias_filler()}) {
      filler->set_type("uniform");
      filler->set_min(-0.5);
      filler->set_max(0.5);
    }
    return param;
  }

  Blob<Dtype> x_, cont_, x_static_, h0_, c0_, top_, h_final_, c_final_;
};
TYPED_TEST_SUITE(LSTMLayerTest, TestDtypesAndDevices);

TYPED_TEST(LSTMLayerTest, ShapesAndParameterOrder) {
  using Dtype = typename TypeParam::Dtype;
  LSTMLayer<Dtype> layer(this->Param());
  layer.SetUp({&this->x_, &this->cont_}, {&this->top_});
  EXPECT_EQ(this->top_.shape(), std::vector<int>({3, 2, 3}));
  const std::vector<std::vector<int>> expected{{12, 3}, {12}, {12, 3}};
  ASSERT_EQ(layer.blobs().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(layer.blobs()[i]->shape(), expected[i]);

  LSTMLayer<Dtype> with_static(this->Param());
  with_static.SetUp({&this->x_, &this->cont_, &this->x_static_}, {&this->top_});
  const std::vector<std::vector<int>> expected_static{{12, 3}, {12}, {12, 2}, {12, 3}};
  ASSERT_EQ(with_static.blobs().size(), expected_static.size());
  for (size_t i = 0; i < expected_static.size(); ++i) {
    EXPECT_EQ(with_static.blobs()[i]->shape(), expected_static[i]);
  }

  LSTMLayer<Dtype> exposed(this->Param(true));
  exposed.SetUp({&this->x_, &this->cont_, &this->h0_, &this->c0_},
                {&this->top_, &this->h_final_, &this->c_final_});
  EXPECT_EQ(this->h_final_.shape(), std::vector<int>({1, 2, 3}));
  EXPECT_EQ(this->c_final_.shape(), std::vector<int>({1, 2, 3}));
}

TYPED_TEST(LSTMLayerTest, ForwardMatchesPlainLoop) {
  using Dtype = typename TypeParam::Dtype;
  for (bool with_static : {false, true}) {
    std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_};
    if (with_static) bottom.push_back(&this->x_static_);
    LSTMLayer<Dtype> layer(this->Param());
    layer.SetUp(bottom, {&this->top_});
    layer.Forward(bottom, {&this->top_});
    const std::vector<double> expected =
        ReferenceLSTM<Dtype>(this->x_, this->cont_, with_static ? &this->x_static_ : nullptr,
                             nullptr, nullptr, layer.blobs());
    ASSERT_EQ(this->top_.count(), static_cast<int>(expected.size()));
    for (int i = 0; i < this->top_.count(); ++i) {
      EXPECT_NEAR(this->top_.cpu_data()[i], expected[i], 1e-5)
          << "element " << i << (with_static ? " with x_static" : "");
    }
  }
}

// Stream 0 continues from the exposed initial states at t = 0.
TYPED_TEST(LSTMLayerTest, ForwardFromExposedStatesMatchesPlainLoop) {
  using Dtype = typename TypeParam::Dtype;
  SetValues(&this->cont_, {1, 0, 1, 1, 1, 1});
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_, &this->h0_, &this->c0_};
  const std::vector<Blob<Dtype>*> top{&this->top_, &this->h_final_, &this->c_final_};
  LSTMLayer<Dtype> layer(this->Param(true));
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  const std::vector<double> expected =
      ReferenceLSTM<Dtype>(this->x_, this->cont_, nullptr, &this->h0_, &this->c0_, layer.blobs());
  ASSERT_EQ(this->top_.count(), static_cast<int>(expected.size()));
  for (int i = 0; i < this->top_.count(); ++i) {
    EXPECT_NEAR(this->top_.cpu_data()[i], expected[i], 1e-5) << "element " << i;
  }
  // h_T is the last step of the output.
  for (int i = 0; i < this->h_final_.count(); ++i) {
    EXPECT_NEAR(this->h_final_.cpu_data()[i], expected[2 * 2 * 3 + i], 1e-6) << "h_T " << i;
  }
}

// Stream 0 starts again at t = 2: from there on it must match a fresh
// sequence; stream 1 continues, and must not.
TYPED_TEST(LSTMLayerTest, ContZeroStartsAFreshSequence) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{4, 2, 3}), cont(std::vector<int>{4, 2}), output;
  FillGaussian(&x);
  SetValues(&cont, {0, 0, 1, 1, 0, 1, 1, 1});
  LSTMLayer<Dtype> layer(this->Param());
  layer.SetUp({&x, &cont}, {&output});
  layer.Forward({&x, &cont}, {&output});

  Blob<Dtype> tail_x, tail_cont(std::vector<int>{2, 2}), tail_output;
  CopySteps(x, 2, 4, &tail_x);
  SetValues(&tail_cont, {0, 0, 1, 1});
  LSTMLayer<Dtype> fresh(this->Param());
  fresh.SetUp({&tail_x, &tail_cont}, {&tail_output});
  for (size_t i = 0; i < layer.blobs().size(); ++i) fresh.blobs()[i]->CopyFrom(*layer.blobs()[i]);
  fresh.Forward({&tail_x, &tail_cont}, {&tail_output});

  double stream1_difference = 0;
  for (int t = 0; t < 2; ++t) {
    for (int j = 0; j < this->kHidden; ++j) {
      EXPECT_NEAR(output.data_at({2 + t, 0, j}), tail_output.data_at({t, 0, j}), 1e-5)
          << "t " << t << ", unit " << j;
      stream1_difference +=
          std::fabs(output.data_at({2 + t, 1, j}) - tail_output.data_at({t, 1, j}));
    }
  }
  EXPECT_GT(stream1_difference, 1e-3);
}

// Without expose_hidden, a batch that continues its sequences (cont 1)
// starts from where the previous batch ended, even with another T.
TYPED_TEST(LSTMLayerTest, CarriesStatesAcrossBatches) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{4, 2, 3}), cont(std::vector<int>{4, 2}), output;
  FillGaussian(&x);
  SetValues(&cont, {0, 0, 1, 1, 1, 1, 1, 1});
  LSTMLayer<Dtype> layer(this->Param());
  layer.SetUp({&x, &cont}, {&output});
  layer.Forward({&x, &cont}, {&output});
  Blob<Dtype> whole;
  whole.CopyFrom(output, false, true);

  Blob<Dtype> first_x, second_x, first_cont(std::vector<int>{3, 2}),
      second_cont(std::vector<int>{1, 2});
  CopySteps(x, 0, 3, &first_x);
  CopySteps(x, 3, 4, &second_x);
  SetValues(&first_cont, {0, 0, 1, 1, 1, 1});
  SetValues(&second_cont, {1, 1});
  layer.Forward({&first_x, &first_cont}, {&output});
  layer.Forward({&second_x, &second_cont}, {&output});
  ASSERT_EQ(output.shape(), std::vector<int>({1, 2, 3}));
  for (int i = 0; i < output.count(); ++i) {
    EXPECT_NEAR(output.cpu_data()[i], whole.cpu_data()[3 * 2 * 3 + i], 1e-5) << "element " << i;
  }
}

TYPED_TEST(LSTMLayerTest, ExposedFinalStatesContinueTheSequence) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{4, 2, 3}), cont(std::vector<int>{4, 2}),
      h0(std::vector<int>{1, 2, 3}), c0(std::vector<int>{1, 2, 3}), output, h_final, c_final;
  FillGaussian(&x);
  SetValues(&cont, {0, 0, 1, 1, 1, 1, 1, 1});
  const std::vector<Blob<Dtype>*> top{&output, &h_final, &c_final};
  LSTMLayer<Dtype> layer(this->Param(true));
  layer.SetUp({&x, &cont, &h0, &c0}, top);
  layer.Forward({&x, &cont, &h0, &c0}, top);
  Blob<Dtype> whole, whole_h_final, whole_c_final;
  whole.CopyFrom(output, false, true);
  whole_h_final.CopyFrom(h_final, false, true);
  whole_c_final.CopyFrom(c_final, false, true);

  Blob<Dtype> first_x, second_x, first_cont(std::vector<int>{2, 2}),
      second_cont(std::vector<int>{2, 2});
  CopySteps(x, 0, 2, &first_x);
  CopySteps(x, 2, 4, &second_x);
  SetValues(&first_cont, {0, 0, 1, 1});
  SetValues(&second_cont, {1, 1, 1, 1});
  layer.Forward({&first_x, &first_cont, &h0, &c0}, top);
  h0.CopyFrom(h_final);
  c0.CopyFrom(c_final);
  layer.Forward({&second_x, &second_cont, &h0, &c0}, top);
  for (int i = 0; i < output.count(); ++i) {
    EXPECT_NEAR(output.cpu_data()[i], whole.cpu_data()[2 * 2 * 3 + i], 1e-5) << "element " << i;
  }
  for (int i = 0; i < h_final.count(); ++i) {
    EXPECT_NEAR(h_final.cpu_data()[i], whole_h_final.cpu_data()[i], 1e-5) << "h_T " << i;
    EXPECT_NEAR(c_final.cpu_data()[i], whole_c_final.cpu_data()[i], 1e-5) << "c_T " << i;
  }
}

TYPED_TEST(LSTMLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  LSTMLayer<Dtype> layer(this->Param());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, {&this->x_, &this->cont_}, {&this->top_}, 0);
}

TYPED_TEST(LSTMLayerTest, GradientWithStaticInput) {
  using Dtype = typename TypeParam::Dtype;
  LSTMLayer<Dtype> layer(this->Param());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_, &this->x_static_};
  checker.CheckGradient(&layer, bottom, {&this->top_}, 0);
  checker.CheckGradient(&layer, bottom, {&this->top_}, 2);
}

// With exposed states, the gradient reaches h_0 and c_0 and comes in
// through h_T and c_T.
TYPED_TEST(LSTMLayerTest, GradientExposedHidden) {
  using Dtype = typename TypeParam::Dtype;
  SetValues(&this->cont_, {1, 0, 1, 1, 1, 1});
  LSTMLayer<Dtype> layer(this->Param(true));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_, &this->h0_, &this->c0_};
  const std::vector<Blob<Dtype>*> top{&this->top_, &this->h_final_, &this->c_final_};
  checker.CheckGradient(&layer, bottom, top, 0);
  checker.CheckGradient(&layer, bottom, top, 2);
  checker.CheckGradient(&layer, bottom, top, 3);
}

// One step, where the output is a copy of h_1 rather than a concatenation.
TYPED_TEST(LSTMLayerTest, GradientOneStep) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{1, 2, 3}), cont(std::vector<int>{1, 2});
  FillGaussian(&x);
  SetValues(&cont, {0, 1});
  LSTMLayer<Dtype> layer(this->Param(true));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&x, &cont, &this->h0_, &this->c0_};
  const std::vector<Blob<Dtype>*> top{&this->top_, &this->h_final_, &this->c_final_};
  checker.CheckGradient(&layer, bottom, top, 0);
  checker.CheckGradient(&layer, bottom, top, 3);
}

TYPED_TEST(LSTMLayerTest, BadConfigurationsNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> wrong_cont(std::vector<int>{2, 3}), wrong_c0(std::vector<int>{1, 3, 3});
  ExpectErrorNamingLstm(
      [&] {
        LSTMLayer<Dtype> layer(this->Param());
        layer.SetUp({&this->x_, &wrong_cont}, {&this->top_});
      },
      "cont");
  ExpectErrorNamingLstm(
      [&] {
        LayerParameter param = this->Param();
        param.mutable_recurrent_param()->set_num_output(0);
        LSTMLayer<Dtype> layer(param);
        layer.SetUp({&this->x_, &this->cont_}, {&this->top_});
      },
      "num_output");
  ExpectErrorNamingLstm(
      [&] {
        LSTMLayer<Dtype> layer(this->Param(true));
        layer.SetUp({&this->x_, &this->cont_, &this->h0_, &wrong_c0},
                    {&this->top_, &this->h_final_, &this->c_final_});
      },
      "c_0");
  ExpectErrorNamingLstm(
      [&] {
        LSTMLayer<Dtype> layer(this->Param(true));
        layer.SetUp({&this->x_, &this->cont_, &this->h0_, &this->c0_}, {&this->top_});
      },
      "top");
  ExpectErrorNamingLstm(
      [&] {
        LSTMLayer<Dtype> layer(this->Param());
        layer.SetUp({&this->x_, &this->cont_}, {&this->top_});
        layer.Forward({&this->x_, &this->cont_}, {&this->top_});
        layer.Backward({&this->top_}, {true, true}, {&this->x_, &this->cont_});
      },
      "cont");
}

TYPED_TEST(LSTMLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("LSTM");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "LSTM");
}

}  // namespace
}  // namespace crema
