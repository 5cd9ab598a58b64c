// Upgrading old Caffe formats: V0 and V1 nets, input fields, BatchNorm masks
// and solver_type come out in the current format; every BVLC reference
// prototxt loads.
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/filesystem.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "crema/proto/crema.pb.h"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename Proto>
Proto Parse(const std::string& text) {
  Proto proto;
  ReadProtoFromString(text, "test text", &proto);
  return proto;
}

// Equality of two messages, with the differences in the failure message.
template <typename Proto>
::testing::AssertionResult SameProto(const Proto& expected, const Proto& actual) {
  google::protobuf::util::MessageDifferencer differencer;
  std::string differences;
  differencer.ReportDifferencesToString(&differences);
  if (differencer.Compare(expected, actual)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differences << "\nactual:\n" << actual.DebugString();
}

// Upgrades `original` (text) and checks it against `expected` (text).
void ExpectNetUpgrade(const std::string& original, const std::string& expected) {
  NetParameter net = Parse<NetParameter>(original);
  ASSERT_TRUE(NetNeedsUpgrade(net));
  EXPECT_TRUE(UpgradeNetAsNeeded("test net", &net));
  EXPECT_TRUE(SameProto(Parse<NetParameter>(expected), net));
  EXPECT_FALSE(NetNeedsUpgrade(net));
}

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(UpgradeProtoTest, V0NetWithPaddingAndDataLayer) {
  const std::string v0 = R"(
    name: "V0Net"
    layers {
      layer {
        name: "data" type: "data" source: "train_leveldb" meanfile: "mean.binaryproto"
        batchsize: 256 cropsize: 227 mirror: true scale: 0.5 rand_skip: 3
      }
      top: "data" top: "label"
    }
    layers {
      layer {
        name: "conv1" type: "conv" num_output: 96 kernelsize: 11 stride: 4
        weight_filler { type: "gaussian" std: 0.01 } bias_filler { type: "constant" }
        blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0
      }
      bottom: "data" top: "conv1"
    }
    layers { layer { name: "relu1" type: "relu" } bottom: "conv1" top: "conv1" }
    layers {
      layer { name: "pool1" type: "pool" pool: MAX kernelsize: 3 stride: 2 }
      bottom: "conv1" top: "pool1"
    }
    layers { layer { name: "norm1" type: "lrn" local_size: 5 alpha: 0.0001 beta: 0.75 }
             bottom: "pool1" top: "norm1" }
    layers { layer { name: "pad2" type: "padding" pad: 2 } bottom: "norm1" top: "pad2" }
    layers {
      layer { name: "conv2" type: "conv" num_output: 256 group: 2 kernelsize: 5 biasterm: false }
      bottom: "pad2" top: "conv2"
    }
    layers { layer { name: "pad3" type: "padding" pad: 1 } bottom: "conv2" top: "pad3" }
    layers {
      layer { name: "pool3" type: "pool" pool: AVE kernelsize: 3 stride: 2 }
      bottom: "pad3" top: "pool3"
    }
    layers {
      layer { name: "fc" type: "innerproduct" num_output: 10 weight_filler { type: "xavier" } }
      bottom: "pool3" top: "fc"
    }
    layers { layer { name: "drop" type: "dropout" dropout_ratio: 0.4 } bottom: "fc" top: "fc" }
    layers { layer { name: "loss" type: "softmax_loss" } bottom: "fc" bottom: "label" }
  )";
  const std::string expected = R"(
    name: "V0Net"
    layer {
      name: "data" type: "Data" top: "data" top: "label"
      data_param { source: "train_leveldb" batch_size: 256 rand_skip: 3 }
      transform_param { scale: 0.5 mean_file: "mean.binaryproto" crop_size: 227 mirror: true }
    }
    layer {
      name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
      param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
      convolution_param {
        num_output: 96 kernel_size: 11 stride: 4
        weight_filler { type: "gaussian" std: 0.01 } bias_filler { type: "constant" }
      }
    }
    layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
    layer {
      name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
      pooling_param { pool: MAX kernel_size: 3 stride: 2 }
    }
    layer {
      name: "norm1" type: "LRN" bottom: "pool1" top: "norm1"
      lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 }
    }
    layer {
      name: "conv2" type: "Convolution" bottom: "norm1" top: "conv2"
      convolution_param { num_output: 256 bias_term: false pad: 2 kernel_size: 5 group: 2 }
    }
    layer {
      name: "pool3" type: "Pooling" bottom: "conv2" top: "pool3"
      pooling_param { pool: AVE pad: 1 kernel_size: 3 stride: 2 }
    }
    layer {
      name: "fc" type: "InnerProduct" bottom: "pool3" top: "fc"
      inner_product_param { num_output: 10 weight_filler { type: "xavier" } }
    }
    layer {
      name: "drop" type: "Dropout" bottom: "fc" top: "fc" dropout_param { dropout_ratio: 0.4 }
    }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "fc" bottom: "label" }
  )";
  ExpectNetUpgrade(v0, expected);
}

TEST(UpgradeProtoTest, V0WindowAndImageDataLayersWithInputs) {
  const std::string v0 = R"(
    input: "rois" input_dim: 1 input_dim: 5 input_dim: 1 input_dim: 1
    layers {
      layer {
        name: "window" type: "window_data" source: "windows.txt" batchsize: 128
        det_fg_threshold: 0.6 det_bg_threshold: 0.4 det_fg_fraction: 0.3 det_context_pad: 16
        det_crop_mode: "square"
      }
      top: "data" top: "label"
    }
    layers {
      layer {
        name: "images" type: "images" source: "list.txt" batchsize: 8 shuffle_images: true
        new_height: 256 new_width: 200
      }
      top: "image" top: "image_label"
    }
    layers { layer { name: "cat" type: "concat" concat_dim: 0 } bottom: "data" bottom: "image"
             top: "cat" }
  )";
  const std::string expected = R"(
    layer {
      name: "input" type: "Input" top: "rois" input_param { shape { dim: 1 dim: 5 dim: 1 dim: 1 } }
    }
    layer {
      name: "window" type: "WindowData" top: "data" top: "label"
      window_data_param {
        source: "windows.txt" batch_size: 128 fg_threshold: 0.6 bg_threshold: 0.4
        fg_fraction: 0.3 context_pad: 16 crop_mode: "square"
      }
    }
    layer {
      name: "images" type: "ImageData" top: "image" top: "image_label"
      image_data_param {
        source: "list.txt" batch_size: 8 shuffle: true new_height: 256 new_width: 200
      }
    }
    layer { name: "cat" type: "Concat" bottom: "data" bottom: "image" top: "cat"
            concat_param { concat_dim: 0 } }
  )";
  ExpectNetUpgrade(v0, expected);
}

TEST(UpgradeProtoTest, V0ErrorsNameTheLayer) {
  // Padding may only feed convolution and pooling.
  NetParameter bad_padding = Parse<NetParameter>(R"(
    input: "x" input_dim: 1 input_dim: 1 input_dim: 4 input_dim: 4
    layers { layer { name: "pad" type: "padding" pad: 1 } bottom: "x" top: "padded" }
    layers { layer { name: "act" type: "relu" } bottom: "padded" top: "y" }
  )");
  std::string message = ErrorOf([&] { UpgradeNetAsNeeded("old.prototxt", &bad_padding); });
  EXPECT_NE(message.find("old.prototxt"), std::string::npos) << message;
  EXPECT_NE(message.find("'act'"), std::string::npos) << message;

  NetParameter unknown_type = Parse<NetParameter>(R"(
    layers { layer { name: "odd" type: "warp_drive" } top: "y" }
  )");
  message = ErrorOf([&] { UpgradeNetAsNeeded("old.prototxt", &unknown_type); });
  EXPECT_NE(message.find("'odd'"), std::string::npos) << message;
  EXPECT_NE(message.find("warp_drive"), std::string::npos) << message;

  NetParameter misplaced_field = Parse<NetParameter>(R"(
    layers { layer { name: "act" type: "relu" num_output: 3 } bottom: "x" top: "x" }
  )");
  message = ErrorOf([&] { UpgradeNetAsNeeded("old.prototxt", &misplaced_field); });
  EXPECT_NE(message.find("'act'"), std::string::npos) << message;
  EXPECT_NE(message.find("num_output"), std::string::npos) << message;
}

TEST(UpgradeProtoTest, V1NetWithLearningRatesRulesAndLossWeight) {
  const std::string v1 = R"(
    name: "V1Net"
    force_backward: true
    layers {
      name: "mnist" type: DATA top: "data" top: "label"
      data_param { source: "train_lmdb" backend: LMDB batch_size: 64 scale: 0.00390625
                   mirror: true }
      include { phase: TRAIN }
    }
    layers {
      name: "mnist" type: IMAGE_DATA top: "data" top: "label"
      image_data_param { source: "test.txt" batch_size: 100 crop_size: 24
                         mean_file: "mean.binaryproto" }
      include { phase: TEST stage: "test-on-test" }
      exclude { not_stage: "deploy" }
    }
    layers {
      name: "conv1" type: CONVOLUTION bottom: "data" top: "conv1"
      blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0
      param: "conv1_w" param: "conv1_b" blob_share_mode: PERMISSIVE
      convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: "xavier" } }
    }
    layers {
      name: "up" type: DECONVOLUTION bottom: "conv1" top: "up"
      convolution_param { num_output: 4 kernel_size: 2 stride: 2 }
    }
    layers { name: "ip" type: INNER_PRODUCT bottom: "up" top: "ip"
              blobs_lr: 0 inner_product_param { num_output: 10 } }
    layers { name: "relu" type: RELU bottom: "ip" top: "ip" relu_param { negative_slope: 0.1 } }
    layers { name: "loss" type: SOFTMAX_LOSS bottom: "ip" bottom: "label" top: "loss"
             loss_weight: 2 loss_param { ignore_label: 3 } }
    layers { name: "l2" type: EUCLIDEAN_LOSS bottom: "ip" bottom: "label" top: "l2"
             loss_weight: 0.5 }
    layers { name: "acc" type: ACCURACY bottom: "ip" bottom: "label" top: "acc"
             accuracy_param { top_k: 5 } include { phase: TEST } }
  )";
  const std::string expected = R"(
    name: "V1Net"
    force_backward: true
    layer {
      name: "mnist" type: "Data" top: "data" top: "label"
      include { phase: TRAIN }
      data_param { source: "train_lmdb" backend: LMDB batch_size: 64 }
      transform_param { scale: 0.00390625 mirror: true }
    }
    layer {
      name: "mnist" type: "ImageData" top: "data" top: "label"
      include { phase: TEST stage: "test-on-test" }
      exclude { not_stage: "deploy" }
      image_data_param { source: "test.txt" batch_size: 100 }
      transform_param { crop_size: 24 mean_file: "mean.binaryproto" }
    }
    layer {
      name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
      param { name: "conv1_w" share_mode: PERMISSIVE lr_mult: 1 decay_mult: 1 }
      param { name: "conv1_b" lr_mult: 2 decay_mult: 0 }
      convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: "xavier" } }
    }
    layer {
      name: "up" type: "Deconvolution" bottom: "conv1" top: "up"
      convolution_param { num_output: 4 kernel_size: 2 stride: 2 }
    }
    layer { name: "ip" type: "InnerProduct" bottom: "up" top: "ip"
            param { lr_mult: 0 } inner_product_param { num_output: 10 } }
    layer { name: "relu" type: "ReLU" bottom: "ip" top: "ip" relu_param { negative_slope: 0.1 } }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss"
            loss_weight: 2 loss_param { ignore_label: 3 } }
    layer { name: "l2" type: "EuclideanLoss" bottom: "ip" bottom: "label" top: "l2"
            loss_weight: 0.5 }
    layer { name: "acc" type: "Accuracy" bottom: "ip" bottom: "label" top: "acc"
            include { phase: TEST } accuracy_param { top_k: 5 } }
  )";
  ExpectNetUpgrade(v1, expected);
}

TEST(UpgradeProtoTest, EveryV1LayerTypeGetsATypeString) {
  const google::protobuf::EnumDescriptor* types = V1LayerParameter::LayerType_descriptor();
  for (int i = 0; i < types->value_count(); ++i) {
    const auto type = static_cast<V1LayerParameter::LayerType>(types->value(i)->number());
    NetParameter net;
    V1LayerParameter* layer = net.add_layers();
    layer->set_name("l");
    layer->set_type(type);
    if (type == V1LayerParameter::NONE) {
      EXPECT_NE(ErrorOf([&] { UpgradeNetAsNeeded("net", &net); }).find("no type"),
                std::string::npos);
      continue;
    }
    UpgradeNetAsNeeded("net", &net);
    ASSERT_EQ(net.layer_size(), 1);
    EXPECT_FALSE(net.layer(0).type().empty()) << types->value(i)->name();
  }
  NetParameter net = Parse<NetParameter>(R"(
    layers { type: SIGMOID_CROSS_ENTROPY_LOSS } layers { type: TANH } layers { type: HDF5_DATA }
    layers { type: MULTINOMIAL_LOGISTIC_LOSS } layers { type: ABSVAL } layers { type: IM2COL }
  )");
  UpgradeNetAsNeeded("net", &net);
  EXPECT_EQ(net.layer(0).type(), "SigmoidCrossEntropyLoss");
  EXPECT_EQ(net.layer(1).type(), "TanH");
  EXPECT_EQ(net.layer(2).type(), "HDF5Data");
  EXPECT_EQ(net.layer(3).type(), "MultinomialLogisticLoss");
  EXPECT_EQ(net.layer(4).type(), "AbsVal");
  EXPECT_EQ(net.layer(5).type(), "Im2col");
}

TEST(UpgradeProtoTest, InputDimBecomesInputLayer) {
  ExpectNetUpgrade(R"(
    name: "deploy"
    input: "data" input_dim: 10 input_dim: 3 input_dim: 227 input_dim: 227
    input: "label" input_dim: 10 input_dim: 1 input_dim: 1 input_dim: 1
    layer { name: "relu" type: "ReLU" bottom: "data" top: "data" }
  )",
                   R"(
    name: "deploy"
    layer {
      name: "input" type: "Input" top: "data" top: "label"
      input_param { shape { dim: 10 dim: 3 dim: 227 dim: 227 } shape { dim: 10 dim: 1 dim: 1 dim: 1 } }
    }
    layer { name: "relu" type: "ReLU" bottom: "data" top: "data" }
  )");
}

TEST(UpgradeProtoTest, InputShapeBecomesInputLayer) {
  ExpectNetUpgrade(R"(
    input: "data" input_shape { dim: 1 dim: 3 dim: 32 dim: 32 }
    layers { name: "ip" type: INNER_PRODUCT bottom: "data" top: "ip"
             inner_product_param { num_output: 10 } }
    layers { name: "prob" type: SOFTMAX bottom: "ip" top: "prob" }
  )",
                   R"(
    layer { name: "input" type: "Input" top: "data"
            input_param { shape { dim: 1 dim: 3 dim: 32 dim: 32 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
            inner_product_param { num_output: 10 } }
    layer { name: "prob" type: "Softmax" bottom: "ip" top: "prob" }
  )");
}

TEST(UpgradeProtoTest, InputWithoutShapeIsDropped) {
  // Old .caffemodel files list the inputs without shapes.
  ExpectNetUpgrade(R"(input: "data" layer { name: "relu" type: "ReLU" bottom: "data" top: "r" })",
                   R"(layer { name: "relu" type: "ReLU" bottom: "data" top: "r" })");
}

TEST(UpgradeProtoTest, InconsistentInputsAreRefused) {
  NetParameter net = Parse<NetParameter>(R"(input: "data" input_dim: 1 input_dim: 3)");
  EXPECT_NE(ErrorOf([&] { UpgradeNetAsNeeded("deploy.prototxt", &net); }).find("deploy.prototxt"),
            std::string::npos);
  net = Parse<NetParameter>(
      R"(input: "data" input_dim: 1 input_dim: 1 input_dim: 1 input_dim: 1
         input_shape { dim: 1 })");
  EXPECT_NE(ErrorOf([&] { UpgradeNetAsNeeded("deploy.prototxt", &net); }), "");
}

TEST(UpgradeProtoTest, BatchNormMasksAreRemoved) {
  ExpectNetUpgrade(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "x" top: "x"
            param { lr_mult: 0 } param { lr_mult: 0 } param { lr_mult: 0 } }
    layer { name: "scale" type: "Scale" bottom: "x" top: "x" param { lr_mult: 0 } }
  )",
                   R"(
    layer { name: "bn" type: "BatchNorm" bottom: "x" top: "x" }
    layer { name: "scale" type: "Scale" bottom: "x" top: "x" param { lr_mult: 0 } }
  )");
}

TEST(UpgradeProtoTest, CurrentNetIsLeftAlone) {
  NetParameter net = Parse<NetParameter>(R"(
    name: "current"
    layer { name: "input" type: "Input" top: "data" input_param { shape { dim: 1 } } }
    layer { name: "bn" type: "BatchNorm" bottom: "data" top: "bn" }
  )");
  const NetParameter original = net;
  EXPECT_FALSE(NetNeedsUpgrade(net));
  EXPECT_FALSE(UpgradeNetAsNeeded("current.prototxt", &net));
  EXPECT_TRUE(SameProto(original, net));
}

TEST(UpgradeProtoTest, LayerAndLayersTogetherAreRefused) {
  NetParameter net = Parse<NetParameter>(R"(
    layer { name: "a" type: "ReLU" bottom: "x" top: "x" }
    layers { name: "b" type: RELU bottom: "x" top: "x" }
  )");
  const std::string message = ErrorOf([&] { UpgradeNetAsNeeded("mixed.prototxt", &net); });
  EXPECT_NE(message.find("mixed.prototxt"), std::string::npos) << message;
  EXPECT_NE(message.find("'layers'"), std::string::npos) << message;
}

TEST(UpgradeProtoTest, SolverTypeBecomesTypeString) {
  const std::pair<const char*, const char*> cases[] = {
      {"SGD", "SGD"},         {"NESTEROV", "Nesterov"}, {"ADAGRAD", "AdaGrad"},
      {"RMSPROP", "RMSProp"}, {"ADADELTA", "AdaDelta"}, {"ADAM", "Adam"}};
  for (const auto& entry : cases) {
    SolverParameter solver =
        Parse<SolverParameter>(std::string("base_lr: 0.01 solver_type: ") + entry.first);
    EXPECT_TRUE(SolverNeedsTypeUpgrade(solver));
    EXPECT_TRUE(UpgradeSolverAsNeeded("solver.prototxt", &solver));
    EXPECT_EQ(solver.type(), entry.second);
    EXPECT_FALSE(solver.has_solver_type());
    EXPECT_FALSE(SolverNeedsTypeUpgrade(solver));
  }
  SolverParameter current = Parse<SolverParameter>(R"(type: "Adam" base_lr: 0.001)");
  EXPECT_FALSE(UpgradeSolverAsNeeded("solver.prototxt", &current));
  EXPECT_EQ(current.type(), "Adam");

  SolverParameter both = Parse<SolverParameter>(R"(type: "Adam" solver_type: NESTEROV)");
  EXPECT_NE(ErrorOf([&] { UpgradeSolverAsNeeded("both.prototxt", &both); }).find("both.prototxt"),
            std::string::npos);
}

TEST(UpgradeProtoTest, SolverEmbeddedV1NetsAreUpgraded) {
  SolverParameter solver = Parse<SolverParameter>(R"(
    base_lr: 0.1
    train_net_param {
      layers { name: "data" type: DUMMY_DATA top: "x" dummy_data_param { shape { dim: 2 } } }
      layers { name: "relu" type: RELU bottom: "x" top: "x" }
    }
    test_net_param { input: "x" input_dim: 1 input_dim: 1 input_dim: 1 input_dim: 1 }
    test_net_param { layers { name: "s" type: SIGMOID bottom: "x" top: "y" } }
  )");
  EXPECT_FALSE(SolverNeedsTypeUpgrade(solver));
  EXPECT_TRUE(UpgradeSolverAsNeeded("solver.prototxt", &solver));
  EXPECT_TRUE(SameProto(Parse<NetParameter>(R"(
    layer { name: "data" type: "DummyData" top: "x" dummy_data_param { shape { dim: 2 } } }
    layer { name: "relu" type: "ReLU" bottom: "x" top: "x" }
  )"),
                        solver.train_net_param()));
  EXPECT_TRUE(SameProto(Parse<NetParameter>(R"(
    layer { name: "input" type: "Input" top: "x"
            input_param { shape { dim: 1 dim: 1 dim: 1 dim: 1 } } }
  )"),
                        solver.test_net_param(0)));
  EXPECT_EQ(solver.test_net_param(1).layer(0).type(), "Sigmoid");
}

class UpgradeProtoFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/crema_upgrade_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { boost::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(UpgradeProtoFileTest, BinaryV1NetKeepsItsBlobs) {
  NetParameter v1 = Parse<NetParameter>(R"(
    name: "weights"
    layers {
      name: "ip" type: INNER_PRODUCT blobs_lr: 1 blobs_lr: 2
      blobs { num: 1 channels: 1 height: 2 width: 3 data: 1 data: 2 data: 3 data: 4 data: 5
              data: 6 }
      blobs { num: 1 channels: 1 height: 1 width: 2 data: 7 data: 8 }
    }
  )");
  const std::string path = dir_ + "/old.caffemodel";
  WriteProtoToBinaryFile(v1, path);
  NetParameter net;
  ReadNetParamsFromBinaryFile(path, &net);
  ASSERT_EQ(net.layers_size(), 0);
  ASSERT_EQ(net.layer_size(), 1);
  EXPECT_EQ(net.layer(0).type(), "InnerProduct");
  ASSERT_EQ(net.layer(0).blobs_size(), 2);
  EXPECT_TRUE(SameProto(v1.layers(0).blobs(0), net.layer(0).blobs(0)));
  EXPECT_TRUE(SameProto(v1.layers(0).blobs(1), net.layer(0).blobs(1)));
}

TEST_F(UpgradeProtoFileTest, ReadErrorsNameTheFile) {
  const std::string missing = dir_ + "/missing.prototxt";
  NetParameter net;
  EXPECT_NE(ErrorOf([&] { ReadNetParamsFromTextFile(missing, &net); }).find(missing),
            std::string::npos);
  SolverParameter solver;
  EXPECT_NE(ErrorOf([&] { ReadSolverParamsFromTextFile(missing, &solver); }).find(missing),
            std::string::npos);
}

bool IsSolverFile(const boost::filesystem::path& path) {
  return path.filename().string().find("solver") != std::string::npos;
}

// After upgrading, a net holds only current-format layers, each with a type.
void ExpectCurrentFormat(const NetParameter& net, const std::string& origin) {
  EXPECT_EQ(net.layers_size(), 0) << origin;
  EXPECT_EQ(net.input_size(), 0) << origin;
  for (const LayerParameter& layer : net.layer()) {
    EXPECT_FALSE(layer.type().empty()) << origin << ": layer " << layer.name();
  }
}

TEST(UpgradeProtoCompatTest, EveryBvlcPrototxtLoads) {
  CREMA_REQUIRE_COMPAT();
  const boost::filesystem::path root(CompatDir() + "/bvlc");
  ASSERT_TRUE(boost::filesystem::is_directory(root)) << root;
  int nets = 0;
  int solvers = 0;
  for (boost::filesystem::recursive_directory_iterator it(root), end; it != end; ++it) {
    const boost::filesystem::path& path = it->path();
    if (!boost::filesystem::is_regular_file(path) || path.extension() != ".prototxt") continue;
    const std::string name = path.string();
    if (IsSolverFile(path)) {
      SolverParameter solver;
      ASSERT_NO_THROW(ReadSolverParamsFromTextFile(name, &solver)) << name;
      EXPECT_FALSE(SolverNeedsTypeUpgrade(solver)) << name;
      EXPECT_FALSE(solver.type().empty()) << name;
      if (solver.has_net_param()) ExpectCurrentFormat(solver.net_param(), name);
      if (solver.has_train_net_param()) ExpectCurrentFormat(solver.train_net_param(), name);
      for (const NetParameter& net : solver.test_net_param()) ExpectCurrentFormat(net, name);
      ++solvers;
    } else {
      NetParameter net;
      ASSERT_NO_THROW(ReadNetParamsFromTextFile(name, &net)) << name;
      EXPECT_GT(net.layer_size(), 0) << name;
      ExpectCurrentFormat(net, name);
      ++nets;
    }
  }
  std::printf("[ compat   ] parsed %d BVLC prototxt files (%d nets, %d solvers)\n", nets + solvers,
              nets, solvers);
  EXPECT_GT(nets + solvers, 40);
}

TEST(UpgradeProtoCompatTest, ConsolidatedLenetSolverGetsCurrentLayers) {
  CREMA_REQUIRE_COMPAT();
  const std::string path = CompatDir() + "/bvlc/examples/mnist/lenet_consolidated_solver.prototxt";
  SolverParameter original;
  ReadProtoFromTextFile(path, &original);
  ASSERT_GT(original.net_param().layers_size(), 0) << "expected V1 layers in " << path;

  SolverParameter solver;
  ReadSolverParamsFromTextFile(path, &solver);
  const NetParameter& net = solver.net_param();
  ExpectCurrentFormat(net, path);
  ASSERT_EQ(net.layer_size(), original.net_param().layers_size());
  EXPECT_EQ(net.layer(0).type(), "Data");
  EXPECT_EQ(net.layer(0).include(0).phase(), TRAIN);
  EXPECT_FLOAT_EQ(net.layer(0).transform_param().scale(), 0.00390625f);
  for (const LayerParameter& layer : net.layer()) {
    if (layer.name() == "conv1") {
      ASSERT_EQ(layer.param_size(), 2);
      EXPECT_EQ(layer.param(0).lr_mult(), 1);
      EXPECT_EQ(layer.param(1).lr_mult(), 2);
      EXPECT_EQ(layer.type(), "Convolution");
    }
    if (layer.name() == "loss") {
      EXPECT_EQ(layer.type(), "SoftmaxWithLoss");
    }
  }
}

}  // namespace
}  // namespace crema
