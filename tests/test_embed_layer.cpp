// Embed: lookups by hand (with and without bias), the weight gradient against
// finite differences and by hand for repeated indices, accumulation, and the
// indices and configurations it refuses.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crema/layers/embed_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename Dtype>
void ExpectErrorNaming(const std::string& detail, Layer<Dtype>* layer,
                       const std::function<void()>& action) {
  try {
    action();
    ADD_FAILURE() << "must be refused (" << detail << ")";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(layer->layer_param().name()), std::string::npos) << message;
    EXPECT_NE(message.find(layer->type()), std::string::npos) << message;
    EXPECT_NE(message.find(detail), std::string::npos) << message;
  }
}

LayerParameter EmbedParam(int input_dim, int num_output) {
  LayerParameter param;
  param.set_name("words");
  param.set_type("Embed");
  EmbedParameter* embed = param.mutable_embed_param();
  embed->set_input_dim(input_dim);
  embed->set_num_output(num_output);
  embed->mutable_weight_filler()->set_type("gaussian");
  embed->mutable_bias_filler()->set_type("gaussian");
  return param;
}

template <typename TypeParam>
class EmbedLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Indices with repeats (row 1 three times, row 3 never).
  EmbedLayerTest() : bottom_(new Blob<Dtype>(std::vector<int>{2, 3})), top_(new Blob<Dtype>()) {
    const Dtype indices[] = {1, 0, 4, 1, 2, 1};
    std::copy(indices, indices + 6, bottom_->mutable_cpu_data());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(EmbedLayerTest, TestDtypesAndDevices);

TYPED_TEST(EmbedLayerTest, LooksUpRowsAndAddsBias) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(EmbedParam(5, 3));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{5, 3}));
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{3}));
  Dtype* weights = layer.blobs()[0]->mutable_cpu_data();
  for (int row = 0; row < 5; ++row) {
    for (int j = 0; j < 3; ++j) weights[row * 3 + j] = 10 * row + j;
  }
  const Dtype bias[] = {0.5, -1, 2};
  std::copy(bias, bias + 3, layer.blobs()[1]->mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 3, 3}));
  const int indices[] = {1, 0, 4, 1, 2, 1};
  for (int n = 0; n < 6; ++n) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(this->top_->cpu_data()[n * 3 + j], Dtype(10 * indices[n] + j) + bias[j])
          << n << "," << j;
    }
  }
}

TYPED_TEST(EmbedLayerTest, WithoutBiasCopiesRows) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = EmbedParam(5, 2);
  param.mutable_embed_param()->set_bias_term(false);
  EmbedLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 1u);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int indices[] = {1, 0, 4, 1, 2, 1};
  for (int n = 0; n < 6; ++n) {
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(this->top_->cpu_data()[n * 2 + j],
                layer.blobs()[0]->cpu_data()[indices[n] * 2 + j]);
    }
  }
}

// The indices take no gradient, so only the parameters are checked: the
// checker is told to check a bottom index past the last bottom.
TYPED_TEST(EmbedLayerTest, WeightAndBiasGradient) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(EmbedParam(5, 3));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, /*check_bottom=*/1);
}

TYPED_TEST(EmbedLayerTest, RepeatedIndicesAccumulate) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(EmbedParam(5, 2));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  // Top diff of lookup n, column j: n + 0.5 j.
  Dtype* top_diff = this->top_->mutable_cpu_diff();
  for (int n = 0; n < 6; ++n) {
    for (int j = 0; j < 2; ++j) top_diff[n * 2 + j] = n + Dtype(0.5) * j;
  }
  for (auto& blob : layer.blobs()) cpu_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  const std::vector<bool> no_bottom{false};
  layer.Backward(this->top_vec_, no_bottom, this->bottom_vec_);
  layer.Backward(this->top_vec_, no_bottom, this->bottom_vec_);
  // Row r gathers the diffs of the lookups that hit it (1: n = 0, 3, 5),
  // twice over since Backward ran twice.
  const std::vector<std::vector<int>> hits{{1}, {0, 3, 5}, {4}, {}, {2}};
  for (int row = 0; row < 5; ++row) {
    for (int j = 0; j < 2; ++j) {
      Dtype expected = 0;
      for (int n : hits[row]) expected += 2 * (n + Dtype(0.5) * j);
      EXPECT_EQ(layer.blobs()[0]->cpu_diff()[row * 2 + j], expected) << row << "," << j;
    }
  }
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(layer.blobs()[1]->cpu_diff()[j], 2 * (15 + 6 * Dtype(0.5) * j)) << j;
  }
}

TYPED_TEST(EmbedLayerTest, IndicesTakeNoGradient) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(EmbedParam(5, 2));
  EXPECT_FALSE(layer.AllowForceBackward(0));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ExpectErrorNaming<Dtype>("cannot back-propagate", &layer, [&] {
    layer.Backward(this->top_vec_, std::vector<bool>{true}, this->bottom_vec_);
  });
}

TYPED_TEST(EmbedLayerTest, RefusesBadIndices) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(EmbedParam(5, 2));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  for (Dtype bad : {Dtype(5), Dtype(-1), Dtype(1.5)}) {
    this->bottom_->mutable_cpu_data()[4] = bad;
    ExpectErrorNaming<Dtype>("bottom element 4 is", &layer,
                             [&] { layer.Forward(this->bottom_vec_, this->top_vec_); });
  }
  this->bottom_->mutable_cpu_data()[4] = 4;
  layer.Forward(this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(EmbedLayerTest, RefusesBadConfigurations) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> no_rows(EmbedParam(0, 2));
  ExpectErrorNaming<Dtype>("input_dim", &no_rows,
                           [&] { no_rows.SetUp(this->bottom_vec_, this->top_vec_); });
  EmbedLayer<Dtype> no_outputs(EmbedParam(5, 0));
  ExpectErrorNaming<Dtype>("num_output", &no_outputs,
                           [&] { no_outputs.SetUp(this->bottom_vec_, this->top_vec_); });

  LayerParameter trained = EmbedParam(5, 2);
  trained.mutable_embed_param()->set_bias_term(false);
  BlobProto* weights = trained.add_blobs();
  weights->mutable_shape()->add_dim(4);
  weights->mutable_shape()->add_dim(2);
  for (int i = 0; i < 8; ++i) weights->add_data(i);
  EmbedLayer<Dtype> wrong_table(trained);
  ExpectErrorNaming<Dtype>("expected 5 2 (10), found 4 2 (8)", &wrong_table,
                           [&] { wrong_table.SetUp(this->bottom_vec_, this->top_vec_); });
}

TYPED_TEST(EmbedLayerTest, UsesTrainedWeights) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter trained = EmbedParam(5, 1);
  trained.mutable_embed_param()->set_bias_term(false);
  BlobProto* weights = trained.add_blobs();
  weights->mutable_shape()->add_dim(5);
  weights->mutable_shape()->add_dim(1);
  for (int i = 0; i < 5; ++i) weights->add_data(100 + i);
  EmbedLayer<Dtype> layer(trained);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int indices[] = {1, 0, 4, 1, 2, 1};
  for (int n = 0; n < 6; ++n) EXPECT_EQ(this->top_->cpu_data()[n], Dtype(100 + indices[n]));
}

TYPED_TEST(EmbedLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(EmbedParam(5, 2))->type(), "Embed");
}

// Errors raised below the layer (here the blob's axis limit, reached when the
// top adds an axis at Forward) carry the layer's name.
TYPED_TEST(EmbedLayerTest, BlobErrorsAtForwardNameTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(EmbedParam(5, 2));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_->Reshape(std::vector<int>(kMaxBlobAxes, 1));
  this->bottom_->mutable_cpu_data()[0] = 1;
  ExpectErrorNaming<Dtype>("at most 32 axes", &layer,
                           [&] { layer.Forward(this->bottom_vec_, this->top_vec_); });
}

// Blobs given in the layer's parameter are read when it is built: a wrong
// value count names the layer and the blob.
TYPED_TEST(EmbedLayerTest, BadBlobInTheParameterNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter trained = EmbedParam(5, 1);
  BlobProto* weights = trained.add_blobs();
  weights->mutable_shape()->add_dim(5);
  weights->add_data(1);
  try {
    EmbedLayer<Dtype> layer(trained);
    FAIL() << "a blob of 1 value for 5 must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("layer 'words' (Embed): blob 0: "), 0u) << e.what();
  }
}

}  // namespace
}  // namespace crema
