// RNN: shapes and parameter order, one step by hand, several steps against a
// plain loop, sequence resets and state carried between batches or through
// exposed states, gradients against finite differences, the parameter-diff
// conventions, weights shared and stored like any layer's, and user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/rnn_layer.hpp"
#include "crema/net.hpp"
#include "crema/util/io.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// o for the equations of rnn_layer.hpp, from h_0 = 0, by plain loops.
template <typename Dtype>
std::vector<double> ReferenceRNN(const Blob<Dtype>& x, const Blob<Dtype>& cont,
                                 const Blob<Dtype>* x_static,
                                 const std::vector<std::shared_ptr<Blob<Dtype>>>& blobs) {
  const int steps = x.shape(0), streams = x.shape(1), inputs = x.count(2);
  const int hidden = blobs[1]->count();
  const int static_inputs = x_static ? x_static->count(1) : 0;
  const int next = x_static ? 3 : 2;
  const Dtype* w_xh = blobs[0]->cpu_data();
  const Dtype* b_h = blobs[1]->cpu_data();
  const Dtype* w_static = x_static ? blobs[2]->cpu_data() : nullptr;
  const Dtype* w_hh = blobs[next]->cpu_data();
  const Dtype* w_ho = blobs[next + 1]->cpu_data();
  const Dtype* b_o = blobs[next + 2]->cpu_data();
  std::vector<double> h(streams * hidden, 0), output;
  for (int t = 0; t < steps; ++t) {
    std::vector<double> new_h(streams * hidden);
    for (int n = 0; n < streams; ++n) {
      const Dtype* x_tn = x.cpu_data() + (t * streams + n) * inputs;
      const double cont_tn = cont.cpu_data()[t * streams + n];
      for (int j = 0; j < hidden; ++j) {
        double sum = b_h[j];
        for (int i = 0; i < inputs; ++i) sum += w_xh[j * inputs + i] * x_tn[i];
        for (int i = 0; i < static_inputs; ++i) {
          sum += w_static[j * static_inputs + i] * x_static->cpu_data()[n * static_inputs + i];
        }
        for (int k = 0; k < hidden; ++k) sum += w_hh[j * hidden + k] * cont_tn * h[n * hidden + k];
        new_h[n * hidden + j] = std::tanh(sum);
      }
    }
    h = new_h;
    for (int n = 0; n < streams; ++n) {
      for (int j = 0; j < hidden; ++j) {
        double sum = b_o[j];
        for (int k = 0; k < hidden; ++k) sum += w_ho[j * hidden + k] * h[n * hidden + k];
        output.push_back(std::tanh(sum));
      }
    }
  }
  return output;
}

void ExpectErrorNamingRnn(const std::function<void()>& action, const std::string& what) {
  try {
    action();
    FAIL() << "expected an error about " << what;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("rnn1"), std::string::npos) << message;
    EXPECT_NE(message.find("RNN"), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

template <typename TypeParam>
class RNNLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  static constexpr int kHidden = 4;

  // T = 3 steps of N = 2 streams with 3 inputs; stream 1 starts a new
  // sequence at t = 1.
  RNNLayerTest()
      : x_(std::vector<int>{3, 2, 3}),
        cont_(std::vector<int>{3, 2}),
        x_static_(std::vector<int>{2, 2}),
        h0_(std::vector<int>{1, 2, kHidden}) {
    Context::set_random_seed(1701);
    FillGaussian(&x_);
    FillGaussian(&x_static_);
    FillGaussian(&h0_);
    SetValues(&cont_, {0, 0, 1, 0, 1, 1});
  }

  static LayerParameter Param(bool expose_hidden = false) {
    LayerParameter param;
    param.set_name("rnn1");
    param.set_type("RNN");
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

  Blob<Dtype> x_, cont_, x_static_, h0_, top_, h_final_;
};
TYPED_TEST_SUITE(RNNLayerTest, TestDtypesAndDevices);

TYPED_TEST(RNNLayerTest, ShapesAndParameterOrder) {
  using Dtype = typename TypeParam::Dtype;
  RNNLayer<Dtype> layer(this->Param());
  layer.SetUp({&this->x_, &this->cont_}, {&this->top_});
  EXPECT_EQ(this->top_.shape(), std::vector<int>({3, 2, 4}));
  const std::vector<std::vector<int>> expected{{4, 3}, {4}, {4, 4}, {4, 4}, {4}};
  ASSERT_EQ(layer.blobs().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(layer.blobs()[i]->shape(), expected[i]);

  RNNLayer<Dtype> with_static(this->Param());
  with_static.SetUp({&this->x_, &this->cont_, &this->x_static_}, {&this->top_});
  const std::vector<std::vector<int>> expected_static{{4, 3}, {4}, {4, 2}, {4, 4}, {4, 4}, {4}};
  ASSERT_EQ(with_static.blobs().size(), expected_static.size());
  for (size_t i = 0; i < expected_static.size(); ++i) {
    EXPECT_EQ(with_static.blobs()[i]->shape(), expected_static[i]);
  }
}

// One step, N = 1, two inputs and two units, weights set by hand:
//   W_xh x + b_h = [0.25, -1.5] + [0.1, 0.2],  W_hh h_0 = [0.5, -1]
//   h_1 = tanh([0.85, -2.3]) (cont 1) or tanh([0.35, -1.3]) (cont 0)
//   o_1 = tanh([h_1[0], 0.5 h_1[0] - h_1[1] + 0.1])
TYPED_TEST(RNNLayerTest, ForwardOneStepByHand) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param(true);
  param.mutable_recurrent_param()->set_num_output(2);
  Blob<Dtype> x(std::vector<int>{1, 1, 2}), cont(std::vector<int>{1, 1}),
      h0(std::vector<int>{1, 1, 2}), output, h_final;
  SetValues(&x, {1, -1});
  SetValues(&h0, {0.5, -0.5});
  std::vector<Blob<Dtype>*> bottom{&x, &cont, &h0}, top{&output, &h_final};
  RNNLayer<Dtype> layer(param);
  layer.SetUp(bottom, top);
  SetValues(layer.blobs()[0].get(), {0.5, 0.25, -0.5, 1});  // W_xh
  SetValues(layer.blobs()[1].get(), {0.1, 0.2});            // b_h
  SetValues(layer.blobs()[2].get(), {1, 0, 0, 2});          // W_hh
  SetValues(layer.blobs()[3].get(), {1, 0, 0.5, -1});       // W_ho
  SetValues(layer.blobs()[4].get(), {0, 0.1});              // b_o

  SetValues(&cont, {1});
  layer.Forward(bottom, top);
  ASSERT_EQ(output.shape(), std::vector<int>({1, 1, 2}));
  ASSERT_EQ(h_final.shape(), std::vector<int>({1, 1, 2}));
  EXPECT_NEAR(h_final.cpu_data()[0], 0.6910695, 1e-6);
  EXPECT_NEAR(h_final.cpu_data()[1], -0.9800964, 1e-6);
  EXPECT_NEAR(output.cpu_data()[0], 0.5986686, 1e-6);
  EXPECT_NEAR(output.cpu_data()[1], 0.8907678, 1e-6);

  SetValues(&cont, {0});
  layer.Forward(bottom, top);
  EXPECT_NEAR(h_final.cpu_data()[0], 0.3363755, 1e-6);
  EXPECT_NEAR(h_final.cpu_data()[1], -0.8617232, 1e-6);
  EXPECT_NEAR(output.cpu_data()[0], 0.3242378, 1e-6);
  EXPECT_NEAR(output.cpu_data()[1], 0.8109888, 1e-6);
}

TYPED_TEST(RNNLayerTest, ForwardMatchesPlainLoop) {
  using Dtype = typename TypeParam::Dtype;
  for (bool with_static : {false, true}) {
    std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_};
    if (with_static) bottom.push_back(&this->x_static_);
    RNNLayer<Dtype> layer(this->Param());
    layer.SetUp(bottom, {&this->top_});
    layer.Forward(bottom, {&this->top_});
    const std::vector<double> expected = ReferenceRNN(
        this->x_, this->cont_, with_static ? &this->x_static_ : nullptr, layer.blobs());
    ASSERT_EQ(this->top_.count(), static_cast<int>(expected.size()));
    for (int i = 0; i < this->top_.count(); ++i) {
      EXPECT_NEAR(this->top_.cpu_data()[i], expected[i], 1e-5)
          << "element " << i << (with_static ? " with x_static" : "");
    }
  }
}

// Stream 0 starts again at t = 2: from there on it must match a fresh
// sequence; stream 1 continues, and must not.
TYPED_TEST(RNNLayerTest, ContZeroStartsAFreshSequence) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{4, 2, 3}), cont(std::vector<int>{4, 2}), output;
  FillGaussian(&x);
  SetValues(&cont, {0, 0, 1, 1, 0, 1, 1, 1});
  RNNLayer<Dtype> layer(this->Param());
  layer.SetUp({&x, &cont}, {&output});
  layer.Forward({&x, &cont}, {&output});

  Blob<Dtype> tail_x, tail_cont(std::vector<int>{2, 2}), tail_output;
  CopySteps(x, 2, 4, &tail_x);
  SetValues(&tail_cont, {0, 0, 1, 1});
  RNNLayer<Dtype> fresh(this->Param());
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
TYPED_TEST(RNNLayerTest, CarriesStatesAcrossBatches) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{4, 2, 3}), cont(std::vector<int>{4, 2}), output;
  FillGaussian(&x);
  SetValues(&cont, {0, 0, 1, 1, 1, 1, 1, 1});
  RNNLayer<Dtype> layer(this->Param());
  layer.SetUp({&x, &cont}, {&output});
  layer.Forward({&x, &cont}, {&output});
  Blob<Dtype> whole;
  whole.CopyFrom(output, false, true);

  Blob<Dtype> first_x, second_x, first_cont(std::vector<int>{2, 2}),
      second_cont(std::vector<int>{1, 2});
  CopySteps(x, 0, 2, &first_x);
  CopySteps(x, 2, 3, &second_x);
  SetValues(&first_cont, {0, 0, 1, 1});
  SetValues(&second_cont, {1, 1});
  layer.Forward({&first_x, &first_cont}, {&output});
  for (int i = 0; i < output.count(); ++i) {
    EXPECT_NEAR(output.cpu_data()[i], whole.cpu_data()[i], 1e-5) << "first batch, element " << i;
  }
  layer.Forward({&second_x, &second_cont}, {&output});
  ASSERT_EQ(output.shape(), std::vector<int>({1, 2, 4}));
  for (int i = 0; i < output.count(); ++i) {
    EXPECT_NEAR(output.cpu_data()[i], whole.cpu_data()[2 * 2 * 4 + i], 1e-5)
        << "second batch, element " << i;
  }
}

TYPED_TEST(RNNLayerTest, ExposedFinalStateContinuesTheSequence) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{4, 2, 3}), cont(std::vector<int>{4, 2}),
      h0(std::vector<int>{1, 2, 4}), output, h_final;
  FillGaussian(&x);
  SetValues(&cont, {0, 0, 1, 1, 1, 1, 1, 1});
  RNNLayer<Dtype> layer(this->Param(true));
  layer.SetUp({&x, &cont, &h0}, {&output, &h_final});
  EXPECT_EQ(output.shape(), std::vector<int>({4, 2, 4}));
  EXPECT_EQ(h_final.shape(), std::vector<int>({1, 2, 4}));
  layer.Forward({&x, &cont, &h0}, {&output, &h_final});
  Blob<Dtype> whole, whole_final;
  whole.CopyFrom(output, false, true);
  whole_final.CopyFrom(h_final, false, true);

  Blob<Dtype> first_x, second_x, first_cont(std::vector<int>{2, 2}),
      second_cont(std::vector<int>{2, 2});
  CopySteps(x, 0, 2, &first_x);
  CopySteps(x, 2, 4, &second_x);
  SetValues(&first_cont, {0, 0, 1, 1});
  SetValues(&second_cont, {1, 1, 1, 1});
  layer.Forward({&first_x, &first_cont, &h0}, {&output, &h_final});
  h0.CopyFrom(h_final);
  layer.Forward({&second_x, &second_cont, &h0}, {&output, &h_final});
  for (int i = 0; i < output.count(); ++i) {
    EXPECT_NEAR(output.cpu_data()[i], whole.cpu_data()[2 * 2 * 4 + i], 1e-5) << "element " << i;
  }
  for (int i = 0; i < h_final.count(); ++i) {
    EXPECT_NEAR(h_final.cpu_data()[i], whole_final.cpu_data()[i], 1e-5) << "h_T element " << i;
  }
}

TYPED_TEST(RNNLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  RNNLayer<Dtype> layer(this->Param());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, {&this->x_, &this->cont_}, {&this->top_}, 0);
}

TYPED_TEST(RNNLayerTest, GradientWithStaticInput) {
  using Dtype = typename TypeParam::Dtype;
  RNNLayer<Dtype> layer(this->Param());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_, &this->x_static_};
  checker.CheckGradient(&layer, bottom, {&this->top_}, 0);
  checker.CheckGradient(&layer, bottom, {&this->top_}, 2);
}

// With exposed states, the gradient reaches h_0 and comes in through h_T.
TYPED_TEST(RNNLayerTest, GradientExposedHidden) {
  using Dtype = typename TypeParam::Dtype;
  SetValues(&this->cont_, {1, 0, 1, 1, 1, 1});
  RNNLayer<Dtype> layer(this->Param(true));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_, &this->h0_};
  const std::vector<Blob<Dtype>*> top{&this->top_, &this->h_final_};
  checker.CheckGradient(&layer, bottom, top, 0);
  checker.CheckGradient(&layer, bottom, top, 2);
}

// Parameter gradients accumulate (the solver zeroes them), bottom gradients
// are overwritten, and neither is touched where not asked for.
TYPED_TEST(RNNLayerTest, BackwardConventions) {
  using Dtype = typename TypeParam::Dtype;
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_}, top{&this->top_};
  RNNLayer<Dtype> layer(this->Param());
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  Blob<Dtype> top_diff;
  top_diff.ReshapeLike(this->top_);
  FillGaussian(&top_diff);
  std::copy(top_diff.cpu_data(), top_diff.cpu_data() + top_diff.count(),
            this->top_.mutable_cpu_diff());
  for (auto& blob : layer.blobs()) cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());

  layer.Backward(top, {true, false}, bottom);
  std::vector<std::vector<Dtype>> once;
  for (auto& blob : layer.blobs()) {
    once.emplace_back(blob->cpu_diff(), blob->cpu_diff() + blob->count());
  }
  const std::vector<Dtype> x_diff(this->x_.cpu_diff(), this->x_.cpu_diff() + this->x_.count());
  layer.Backward(top, {true, false}, bottom);
  for (size_t b = 0; b < once.size(); ++b) {
    double magnitude = 0;
    for (int i = 0; i < layer.blobs()[b]->count(); ++i) {
      EXPECT_NEAR(layer.blobs()[b]->cpu_diff()[i], 2 * once[b][i], 1e-5) << "param " << b;
      magnitude += std::fabs(once[b][i]);
    }
    EXPECT_GT(magnitude, 0) << "param " << b;
  }
  for (int i = 0; i < this->x_.count(); ++i) {
    EXPECT_NEAR(this->x_.cpu_diff()[i], x_diff[i], 1e-6) << "x element " << i;
  }

  // W_hh frozen, x's gradient not wanted.
  layer.set_param_propagate_down(2, false);
  for (auto& blob : layer.blobs()) cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  cpu_set(this->x_.count(), Dtype(7), this->x_.mutable_cpu_diff());
  layer.Backward(top, {false, false}, bottom);
  EXPECT_EQ(layer.blobs()[2]->asum_diff(), Dtype(0));
  EXPECT_GT(layer.blobs()[0]->asum_diff(), Dtype(0));
  for (int i = 0; i < this->x_.count(); ++i) EXPECT_EQ(this->x_.cpu_diff()[i], Dtype(7));
}

// A test net shares the train net's weights by making the layer's blobs use
// other memory; the unrolled steps must follow.
TYPED_TEST(RNNLayerTest, FollowsSharedWeights) {
  using Dtype = typename TypeParam::Dtype;
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_};
  Blob<Dtype> other_top;
  RNNLayer<Dtype> trained(this->Param()), shared(this->Param());
  trained.SetUp(bottom, {&this->top_});
  shared.SetUp(bottom, {&other_top});
  shared.Forward(bottom, {&other_top});
  for (size_t i = 0; i < trained.blobs().size(); ++i) {
    shared.blobs()[i]->ShareData(*trained.blobs()[i]);
  }
  trained.Forward(bottom, {&this->top_});
  shared.Forward(bottom, {&other_top});
  for (int i = 0; i < this->top_.count(); ++i) {
    EXPECT_EQ(other_top.cpu_data()[i], this->top_.cpu_data()[i]) << "element " << i;
  }
}

TYPED_TEST(RNNLayerTest, UsesBlobsGivenWithTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  const std::vector<Blob<Dtype>*> bottom{&this->x_, &this->cont_};
  RNNLayer<Dtype> original(this->Param());
  original.SetUp(bottom, {&this->top_});
  original.Forward(bottom, {&this->top_});
  LayerParameter saved;
  original.ToProto(&saved);
  ASSERT_EQ(saved.blobs_size(), 5);

  Blob<Dtype> restored_top;
  RNNLayer<Dtype> restored(saved);
  restored.SetUp(bottom, {&restored_top});
  restored.Forward(bottom, {&restored_top});
  for (int i = 0; i < this->top_.count(); ++i) {
    EXPECT_EQ(restored_top.cpu_data()[i], this->top_.cpu_data()[i]) << "element " << i;
  }

  saved.mutable_blobs()->RemoveLast();
  RNNLayer<Dtype> short_of_blobs(saved);
  ExpectErrorNamingRnn([&] { short_of_blobs.SetUp(bottom, {&restored_top}); }, "parameter blobs");
}

TYPED_TEST(RNNLayerTest, WeightsRoundTripThroughNets) {
  using Dtype = typename TypeParam::Dtype;
  NetParameter net_param;
  ReadProtoFromString(
      "layer { name: 'input' type: 'Input' top: 'x' top: 'cont'"
      "  input_param { shape { dim: 3 dim: 2 dim: 3 } shape { dim: 3 dim: 2 } } }"
      "layer { name: 'rnn1' type: 'RNN' bottom: 'x' bottom: 'cont' top: 'o'"
      "  recurrent_param { num_output: 4 weight_filler { type: 'uniform' min: -1 max: 1 } } }",
      "rnn net", &net_param);
  Net<Dtype> trained(net_param), loaded(net_param);
  ASSERT_EQ(trained.learnable_params().size(), 5u);
  EXPECT_EQ(trained.learnable_params()[0], trained.layer_by_name("rnn1")->blobs()[0].get());
  NetParameter weights;
  trained.ToProto(&weights);
  loaded.CopyTrainedLayersFrom(weights);
  for (Net<Dtype>* net : {&trained, &loaded}) {
    net->blob_by_name("x")->CopyFrom(this->x_);
    net->blob_by_name("cont")->CopyFrom(this->cont_);
    net->Forward();
  }
  const Blob<Dtype>& expected = *trained.blob_by_name("o");
  const Blob<Dtype>& actual = *loaded.blob_by_name("o");
  EXPECT_GT(expected.asum_data(), Dtype(0));
  for (int i = 0; i < expected.count(); ++i) {
    EXPECT_EQ(actual.cpu_data()[i], expected.cpu_data()[i]) << "element " << i;
  }
}

TYPED_TEST(RNNLayerTest, BadConfigurationsNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> wrong_cont(std::vector<int>{3, 1}), flat_x(std::vector<int>{3, 2}),
      wrong_h0(std::vector<int>{1, 2, 3});
  ExpectErrorNamingRnn(
      [&] {
        RNNLayer<Dtype> layer(this->Param());
        layer.SetUp({&this->x_, &wrong_cont}, {&this->top_});
      },
      "cont");
  ExpectErrorNamingRnn(
      [&] {
        LayerParameter param = this->Param();
        param.mutable_recurrent_param()->set_num_output(0);
        RNNLayer<Dtype> layer(param);
        layer.SetUp({&this->x_, &this->cont_}, {&this->top_});
      },
      "num_output");
  ExpectErrorNamingRnn(
      [&] {
        RNNLayer<Dtype> layer(this->Param());
        layer.SetUp({&flat_x, &this->cont_}, {&this->top_});
      },
      "x (bottom 0)");
  ExpectErrorNamingRnn(
      [&] {
        RNNLayer<Dtype> layer(this->Param(true));
        layer.SetUp({&this->x_, &this->cont_, &wrong_h0}, {&this->top_, &this->h_final_});
      },
      "h_0");
  ExpectErrorNamingRnn(
      [&] {
        RNNLayer<Dtype> layer(this->Param(true));
        layer.SetUp({&this->x_, &this->cont_}, {&this->top_, &this->h_final_});
      },
      "bottom");
  // A later batch of a different size per step.
  ExpectErrorNamingRnn(
      [&] {
        RNNLayer<Dtype> layer(this->Param());
        layer.SetUp({&this->x_, &this->cont_}, {&this->top_});
        Blob<Dtype> wider_x(std::vector<int>{3, 2, 5});
        layer.Forward({&wider_x, &this->cont_}, {&this->top_});
      },
      "values per step");
}

TYPED_TEST(RNNLayerTest, ContHasNoGradient) {
  using Dtype = typename TypeParam::Dtype;
  RNNLayer<Dtype> layer(this->Param());
  EXPECT_TRUE(layer.AllowForceBackward(0));
  EXPECT_FALSE(layer.AllowForceBackward(1));
  layer.SetUp({&this->x_, &this->cont_}, {&this->top_});
  layer.Forward({&this->x_, &this->cont_}, {&this->top_});
  ExpectErrorNamingRnn(
      [&] {
        layer.Backward({&this->top_}, {true, true}, {&this->x_, &this->cont_});
      },
      "cont");
}

TYPED_TEST(RNNLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("RNN");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "RNN");
}

}  // namespace
}  // namespace crema
