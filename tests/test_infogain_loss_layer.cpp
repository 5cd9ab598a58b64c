// InfogainLoss: the loss by hand with H from a third bottom and from a
// .binaryproto file, H = I against SoftmaxWithLoss, ignore_label and
// normalization, the probabilities top, gradients for both sources of H,
// and refused configurations (missing or unreadable file, wrong H, labels).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/infogain_loss_layer.hpp"
#include "crema/layers/softmax_loss_layer.hpp"
#include "crema/util/io.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

std::vector<double> Softmax(const std::vector<double>& scores) {
  double sum = 0;
  for (double s : scores) sum += std::exp(s);
  std::vector<double> p;
  for (double s : scores) p.push_back(std::exp(s) / sum);
  return p;
}

const std::vector<double> kInfogain = {1,   0.5, 0,  //
                                       0,   1,   0,  //
                                       0.2, 0.3, 1};

// -sum_k H[label, k] log softmax(scores)_k, by hand.
double InfogainTerm(const std::vector<double>& scores, int label) {
  const std::vector<double> p = Softmax(scores);
  double term = 0;
  for (int k = 0; k < 3; ++k) term -= kInfogain[label * 3 + k] * std::log(p[k]);
  return term;
}

// A file name no other test (or typed instance, or process) uses.
std::string TemporaryPath(const std::string& what) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return "/tmp/crema_" + name + "_" + std::to_string(getpid()) + "_" + what;
}

template <typename TypeParam>
class InfogainLossLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Two items, three classes: scores (1, 2, 3) labelled 2 and (0.5, -1, 0)
  // labelled 0; H as in kInfogain, in Caffe's (1, 1, K, K) layout.
  InfogainLossLayerTest()
      : scores_(std::vector<int>{2, 3}),
        labels_(std::vector<int>{2}),
        infogain_(1, 1, 3, 3),
        bottom_vec_{&scores_, &labels_, &infogain_},
        top_vec_{&loss_} {
    SetValues(&scores_, {1, 2, 3, 0.5, -1, 0});
    SetValues(&labels_, {2, 0});
    SetValues(&infogain_, kInfogain);
  }
  ~InfogainLossLayerTest() override {
    if (!infogain_file_.empty()) std::remove(infogain_file_.c_str());
  }
  // Writes H to a .binaryproto file and returns the layer parameter naming it.
  LayerParameter ParamWithInfogainFile() {
    infogain_file_ = TemporaryPath("H.binaryproto");
    BlobProto proto;
    infogain_.ToProto(&proto);
    WriteProtoToBinaryFile(proto, infogain_file_);
    LayerParameter param;
    param.mutable_infogain_loss_param()->set_source(infogain_file_);
    return param;
  }
  Dtype LossWith(const LayerParameter& param, const std::vector<Blob<Dtype>*>& bottom) {
    InfogainLossLayer<Dtype> layer(param);
    layer.SetUp(bottom, top_vec_);
    return layer.Forward(bottom, top_vec_);
  }
  std::vector<Blob<Dtype>*> TwoBottoms() { return {&scores_, &labels_}; }
  // Scores (2, 3, 2): two positions per item, labels random in [0, 3).
  void MakeSpatial() {
    scores_.Reshape(std::vector<int>{2, 3, 2});
    labels_.Reshape(std::vector<int>{2, 2});
    std::mt19937 rng(1701);
    std::normal_distribution<double> gaussian(0.0, 1.0);
    for (int i = 0; i < scores_.count(); ++i) scores_.mutable_cpu_data()[i] = Dtype(gaussian(rng));
    SetValues(&labels_, {2, 0, 1, 2});
  }

  const double item0_ = InfogainTerm({1, 2, 3}, 2);
  const double item1_ = InfogainTerm({0.5, -1, 0}, 0);
  Blob<Dtype> scores_, labels_, infogain_, loss_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
  std::string infogain_file_;
};
TYPED_TEST_SUITE(InfogainLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(InfogainLossLayerTest, ForwardByHandFromThirdBottom) {
  EXPECT_NEAR(this->LossWith(LayerParameter(), this->bottom_vec_),
              (this->item0_ + this->item1_) / 2, 1e-6);
  EXPECT_EQ(this->loss_.num_axes(), 0);
}

TYPED_TEST(InfogainLossLayerTest, ForwardByHandFromFile) {
  const LayerParameter param = this->ParamWithInfogainFile();
  EXPECT_NEAR(this->LossWith(param, this->TwoBottoms()), (this->item0_ + this->item1_) / 2, 1e-6);
}

TYPED_TEST(InfogainLossLayerTest, IdentityMatchesSoftmaxWithLoss) {
  using Dtype = typename TypeParam::Dtype;
  SetValues(&this->infogain_, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  const Dtype infogain_loss = this->LossWith(LayerParameter(), this->bottom_vec_);
  SoftmaxWithLossLayer<Dtype> softmax_loss{LayerParameter()};
  std::vector<Blob<Dtype>*> two = this->TwoBottoms();
  softmax_loss.SetUp(two, this->top_vec_);
  EXPECT_NEAR(infogain_loss, softmax_loss.Forward(two, this->top_vec_), 1e-6);
}

TYPED_TEST(InfogainLossLayerTest, IgnoreLabelAndNormalization) {
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(0);  // drops item 1
  EXPECT_NEAR(this->LossWith(param, this->bottom_vec_), this->item0_, 1e-6) << "VALID";
  param.mutable_loss_param()->set_normalization(LossParameter::FULL);
  EXPECT_NEAR(this->LossWith(param, this->bottom_vec_), this->item0_ / 2, 1e-6) << "FULL";
  param.mutable_loss_param()->set_normalization(LossParameter::BATCH_SIZE);
  EXPECT_NEAR(this->LossWith(param, this->bottom_vec_), this->item0_ / 2, 1e-6) << "BATCH_SIZE";
  param.mutable_loss_param()->set_normalization(LossParameter::NONE);
  EXPECT_NEAR(this->LossWith(param, this->bottom_vec_), this->item0_, 1e-6) << "NONE";
  param.mutable_loss_param()->clear_normalization();
  param.mutable_loss_param()->set_normalize(false);
  EXPECT_NEAR(this->LossWith(param, this->bottom_vec_), this->item0_ / 2, 1e-6)
      << "normalize: false is BATCH_SIZE";
}

TYPED_TEST(InfogainLossLayerTest, SecondTopHoldsProbabilities) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> prob;
  std::vector<Blob<Dtype>*> tops{&this->loss_, &prob};
  InfogainLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, tops);
  EXPECT_EQ(layer.loss(1), Dtype(0));
  layer.Forward(this->bottom_vec_, tops);
  const std::vector<double> p0 = Softmax({1, 2, 3}), p1 = Softmax({0.5, -1, 0});
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(prob.cpu_data()[k], p0[k], 1e-6);
    EXPECT_NEAR(prob.cpu_data()[3 + k], p1[k], 1e-6);
  }
}

TYPED_TEST(InfogainLossLayerTest, GradientWithThirdBottom) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeSpatial();
  LayerParameter param;
  param.mutable_loss_param()->set_ignore_label(1);
  InfogainLossLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(InfogainLossLayerTest, GradientWithFile) {
  using Dtype = typename TypeParam::Dtype;
  this->MakeSpatial();
  InfogainLossLayer<Dtype> layer(this->ParamWithInfogainFile());
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->TwoBottoms(), this->top_vec_, 0);
}

TYPED_TEST(InfogainLossLayerTest, MissingFileNamesThePathAndTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("infogain");
  const std::string missing = TemporaryPath("missing.binaryproto");
  param.mutable_infogain_loss_param()->set_source(missing);
  InfogainLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->TwoBottoms(), this->top_vec_);
    FAIL() << "a missing infogain file must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("infogain"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("InfogainLoss"), std::string::npos) << e.what();
  }
  InfogainLossLayer<Dtype> no_source{LayerParameter()};
  EXPECT_THROW(no_source.SetUp(this->TwoBottoms(), this->top_vec_), Error);
}

TYPED_TEST(InfogainLossLayerTest, WrongSizedInfogainNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("infogain");
  this->infogain_.Reshape(std::vector<int>{2, 2});
  InfogainLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "a 2 x 2 H for 3 classes must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("infogain"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 x 3"), std::string::npos) << e.what();
  }
}

TYPED_TEST(InfogainLossLayerTest, RefusedLabels) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("infogain");
  this->labels_.mutable_cpu_data()[0] = 3;
  InfogainLossLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Forward(this->bottom_vec_, this->top_vec_), Error);
  this->labels_.Reshape(std::vector<int>{3});
  InfogainLossLayer<Dtype> mismatched(param);
  try {
    mismatched.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "3 labels for 2 items must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(this->scores_.shape_string()), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(this->labels_.shape_string()), std::string::npos)
        << e.what();
  }
}

TYPED_TEST(InfogainLossLayerTest, RefusesGradientToLabelsAndInfogain) {
  using Dtype = typename TypeParam::Dtype;
  InfogainLossLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true, false}, this->bottom_vec_), Error);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, false, true}, this->bottom_vec_), Error);
  EXPECT_FALSE(layer.AllowForceBackward(2));
}

TYPED_TEST(InfogainLossLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("InfogainLoss");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "InfogainLoss");
}

// A readable file whose blob is malformed is named too (the blob's message
// alone said neither the file nor the layer).
TYPED_TEST(InfogainLossLayerTest, MalformedInfogainFileNamesThePath) {
  using Dtype = typename TypeParam::Dtype;
  const std::string file = TemporaryPath("short_H.binaryproto");
  BlobProto proto;
  proto.mutable_shape()->add_dim(3);
  proto.mutable_shape()->add_dim(3);
  proto.add_data(1.f);  // 1 value for 9
  WriteProtoToBinaryFile(proto, file);
  LayerParameter param;
  param.set_name("infogain");
  param.mutable_infogain_loss_param()->set_source(file);
  InfogainLossLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->TwoBottoms(), this->top_vec_);
    ADD_FAILURE() << "a blob of 1 value for 3 x 3 must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'infogain'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
  std::remove(file.c_str());
}

}  // namespace
}  // namespace crema
