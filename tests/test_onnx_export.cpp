// `crema export`'s graph: which ONNX nodes and initializers a net becomes.
// That the model computes what the net computes is checked by a second
// runtime in tests/python/test_onnx_export.py.
#ifdef CREMA_ONNX

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "crema/export/onnx_export.hpp"
#include "crema/net.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

// conv -> BatchNorm -> ReLU in place -> pool -> ip -> softmax.
const char kTinyNet[] =
    "name: 'tiny' "
    "layer { name: 'data' type: 'Input' top: 'data'"
    "  input_param { shape { dim: 1 dim: 2 dim: 6 dim: 6 } } }"
    "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
    "  convolution_param { num_output: 3 kernel_size: 3 pad: 1 group: 1 } }"
    "layer { name: 'bn' type: 'BatchNorm' bottom: 'conv' top: 'conv' }"
    "layer { name: 'relu' type: 'ReLU' bottom: 'conv' top: 'conv' }"
    "layer { name: 'pool' type: 'Pooling' bottom: 'conv' top: 'pool'"
    "  pooling_param { pool: MAX kernel_size: 3 stride: 2 } }"
    "layer { name: 'ip' type: 'InnerProduct' bottom: 'pool' top: 'ip'"
    "  inner_product_param { num_output: 4 } }"
    "layer { name: 'prob' type: 'Softmax' bottom: 'ip' top: 'prob' }";

std::unique_ptr<Net<float>> TestNet(const std::string& text) {
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(TEST);
  return std::unique_ptr<Net<float>>(new Net<float>(param));
}

onnx::ModelProto Export(const Net<float>& net) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(NetToOnnx(net)));
  return model;
}

TEST(OnnxExportTest, TinyNetBecomesItsNodesAndInitializers) {
  const std::unique_ptr<Net<float>> net = TestNet(kTinyNet);
  const onnx::ModelProto model = Export(*net);
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).version(), 13);
  const onnx::GraphProto& graph = model.graph();
  std::vector<std::string> ops;
  for (const auto& node : graph.node()) ops.push_back(node.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "BatchNormalization", "Relu", "MaxPool",
                                           "Flatten", "Gemm", "Softmax"}));
  std::map<std::string, std::vector<int64_t>> initializers;
  for (const auto& tensor : graph.initializer()) {
    initializers[tensor.name()].assign(tensor.dims().begin(), tensor.dims().end());
  }
  EXPECT_EQ(initializers.at("conv/W"), (std::vector<int64_t>{3, 2, 3, 3}));
  EXPECT_EQ(initializers.at("conv/B"), (std::vector<int64_t>{3}));
  EXPECT_EQ(initializers.at("bn/mean"), (std::vector<int64_t>{3}));
  EXPECT_EQ(initializers.at("ip/W"), (std::vector<int64_t>{4, 27}));
  ASSERT_EQ(graph.input_size(), 1);
  EXPECT_EQ(graph.input(0).name(), "data");
  ASSERT_EQ(graph.output_size(), 1);
  EXPECT_EQ(graph.output(0).name(), "prob");
}

// conv's blob is written three times (conv, bn, relu in place): each ONNX
// value once, the last under the blob's own name.
TEST(OnnxExportTest, InPlaceLayersWriteFreshValues) {
  const std::unique_ptr<Net<float>> net = TestNet(kTinyNet);
  const onnx::GraphProto graph = Export(*net).graph();
  EXPECT_EQ(graph.node(0).output(0), "conv/conv");
  EXPECT_EQ(graph.node(1).input(0), "conv/conv");
  EXPECT_EQ(graph.node(1).output(0), "conv/bn");
  EXPECT_EQ(graph.node(2).output(0), "conv");
  EXPECT_EQ(graph.node(3).input(0), "conv");
}

// 6 -> ceil((6 - 3) / 2) + 1 = 3 in Caffe, 2 with ONNX's floor: one more
// cell of padding after the input.
TEST(OnnxExportTest, PoolingPadsForCaffesCeilRounding) {
  const std::unique_ptr<Net<float>> net = TestNet(kTinyNet);
  const onnx::GraphProto graph = Export(*net).graph();
  const onnx::NodeProto& pool = graph.node(3);
  ASSERT_EQ(pool.op_type(), "MaxPool");
  for (const auto& attribute : pool.attribute()) {
    if (attribute.name() == "pads") {
      EXPECT_EQ(std::vector<int64_t>(attribute.ints().begin(), attribute.ints().end()),
                (std::vector<int64_t>{0, 0, 1, 1}));
    }
  }
}

// An in-place layer on the net's input: the graph input keeps the net's
// name for it ("data"), and the in-place result gets another.
TEST(OnnxExportTest, InPlaceLayerOnTheInputKeepsTheInputName) {
  const std::unique_ptr<Net<float>> net = TestNet(
      "layer { name: 'input' type: 'Input' top: 'data'"
      "  input_param { shape { dim: 1 dim: 3 dim: 4 dim: 4 } } }"
      "layer { name: 'scale' type: 'Power' bottom: 'data' top: 'data'"
      "  power_param { scale: 0.5 } }"
      "layer { name: 'relu' type: 'ReLU' bottom: 'data' top: 'out' }");
  const onnx::GraphProto graph = Export(*net).graph();
  ASSERT_EQ(graph.input_size(), 1);
  EXPECT_EQ(graph.input(0).name(), "data");
  std::set<std::string> outputs;
  for (const auto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      EXPECT_TRUE(outputs.insert(output).second) << output << " written twice";
      EXPECT_NE(output, "data");
    }
  }
  EXPECT_EQ(graph.node(0).input(0), "data");
  EXPECT_EQ(graph.node(graph.node_size() - 1).output(0), "out");
}

// 5 -> ceil((5 - 1) / 3) + 1 = 3 windows in Caffe, the last starting at 6:
// past the input, and an end pad of 2 >= kernel 1, which ONNX refuses.
TEST(OnnxExportTest, PoolingWindowStartingPastTheInputIsRefused) {
  const std::unique_ptr<Net<float>> net = TestNet(
      "layer { name: 'input' type: 'Input' top: 'data'"
      "  input_param { shape { dim: 1 dim: 1 dim: 5 dim: 5 } } }"
      "layer { name: 'sparse' type: 'Pooling' bottom: 'data' top: 'pool'"
      "  pooling_param { pool: MAX kernel_size: 1 stride: 3 } }");
  const std::string message = ErrorMessageOf([&] { NetToOnnx(*net); });
  EXPECT_NE(message.find("layer 'sparse' of type Pooling"), std::string::npos) << message;
  EXPECT_NE(message.find("its last window starts past the input (ceil rounding with stride 3 "
                         "above kernel 1)"),
            std::string::npos)
      << message;
}

TEST(OnnxExportTest, LayerWithoutOnnxEquivalentIsAnErrorNamingIt) {
  const std::unique_ptr<Net<float>> net = TestNet(
      "layer { name: 'data' type: 'Input' top: 'data' top: 'cont'"
      "  input_param { shape { dim: 2 dim: 1 dim: 3 } shape { dim: 2 dim: 1 } } }"
      "layer { name: 'lstm1' type: 'LSTM' bottom: 'data' bottom: 'cont' top: 'lstm1'"
      "  recurrent_param { num_output: 4 } }");
  const std::string message = ErrorMessageOf([&] { NetToOnnx(*net); });
  EXPECT_NE(message.find("layer 'lstm1' of type LSTM"), std::string::npos) << message;
}

// A tiny SSD head: loc and conf for 2 x 2 cells, 4 priors each, 3 classes.
std::string SsdNet(const std::string& detection_param) {
  return "layer { name: 'data' type: 'Input' top: 'data'"
         "  input_param { shape { dim: 1 dim: 3 dim: 8 dim: 8 } } }"
         "layer { name: 'feature' type: 'Convolution' bottom: 'data' top: 'feature'"
         "  convolution_param { num_output: 2 kernel_size: 4 stride: 4 } }"
         "layer { name: 'loc_input' type: 'Input' top: 'loc' top: 'conf'"
         "  input_param { shape { dim: 1 dim: 64 } shape { dim: 1 dim: 48 } } }"
         "layer { name: 'prior' type: 'PriorBox' bottom: 'feature' bottom: 'data' top: 'prior'"
         "  prior_box_param { min_size: 2 max_size: 4 aspect_ratio: 2 variance: 0.1 } }"
         "layer { name: 'det' type: 'DetectionOutput' bottom: 'loc' bottom: 'conf'"
         "  bottom: 'prior' top: 'det' detection_output_param { num_classes: 3 " +
         detection_param + " } }";
}

// PriorBox becomes a constant, DetectionOutput an NMS whose output has a
// symbolic number of rows.
TEST(OnnxExportTest, SsdHeadBecomesConstantPriorsAndNms) {
  const std::unique_ptr<Net<float>> net =
      TestNet(SsdNet("nms_param { nms_threshold: 0.45 top_k: 5 } keep_top_k: 3"));
  const onnx::GraphProto graph = Export(*net).graph();
  bool prior_is_constant = false;
  for (const auto& tensor : graph.initializer()) {
    if (tensor.name() == "prior") {
      prior_is_constant = true;
      EXPECT_EQ(std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end()),
                (std::vector<int64_t>{1, 2, 64}));
    }
  }
  EXPECT_TRUE(prior_is_constant);
  std::map<std::string, int> ops;
  for (const auto& node : graph.node()) ++ops[node.op_type()];
  EXPECT_EQ(ops["NonMaxSuppression"], 1);
  EXPECT_EQ(ops["TopK"], 2);  // nms_param.top_k, keep_top_k
  ASSERT_EQ(graph.output_size(), 1);
  const auto& shape = graph.output(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 4);
  EXPECT_EQ(shape.dim(2).dim_param(), "detections");
  EXPECT_EQ(shape.dim(3).dim_value(), 7);
}

// The message of exporting a net whose layer `name` of `type` is refused.
void ExpectRefused(const std::string& net_text, const std::string& name, const std::string& type,
                   const std::string& why) {
  const std::unique_ptr<Net<float>> net = TestNet(net_text);
  const std::string message = ErrorMessageOf([&] { NetToOnnx(*net); });
  EXPECT_NE(message.find("layer '" + name + "' of type " + type), std::string::npos) << message;
  EXPECT_NE(message.find(why), std::string::npos) << message;
}

TEST(OnnxExportTest, AdaptiveNmsIsRefused) {
  ExpectRefused(SsdNet("nms_param { nms_threshold: 0.6 eta: 0.9 }"), "det", "DetectionOutput",
                "eta < 1");
}

TEST(OnnxExportTest, SegNetBnLearningModeIsRefused) {
  ExpectRefused(
      "layer { name: 'data' type: 'Input' top: 'data'"
      "  input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }"
      "layer { name: 'bn' type: 'BN' bottom: 'data' top: 'bn' bn_param { bn_mode: LEARN } }",
      "bn", "BN", "bn_mode LEARN");
}

TEST(OnnxExportTest, SegNetMonteCarloDropoutIsRefused) {
  ExpectRefused(
      "layer { name: 'data' type: 'Input' top: 'data'"
      "  input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }"
      "layer { name: 'drop' type: 'Dropout' bottom: 'data' top: 'drop'"
      "  dropout_param { sample_weights_test: true } }",
      "drop", "Dropout", "sample_weights_test");
}

TEST(OnnxExportTest, PsRoiPoolingAndProposalAreRefusedByName) {
  ExpectRefused(
      "layer { name: 'data' type: 'Input' top: 'maps' top: 'rois'"
      "  input_param { shape { dim: 1 dim: 8 dim: 4 dim: 4 } shape { dim: 1 dim: 5 } } }"
      "layer { name: 'vote' type: 'PSROIPooling' bottom: 'maps' bottom: 'rois' top: 'vote'"
      "  psroi_pooling_param { spatial_scale: 1 output_dim: 2 group_size: 2 } }",
      "vote", "PSROIPooling", "position-sensitive");
  ExpectRefused(
      "layer { name: 'data' type: 'Input' top: 'scores' top: 'deltas' top: 'im_info'"
      "  input_param { shape { dim: 1 dim: 2 dim: 4 dim: 4 } shape { dim: 1 dim: 4 dim: 4 dim: 4 }"
      "  shape { dim: 1 dim: 3 } } }"
      "layer { name: 'proposal' type: 'Proposal' bottom: 'scores' bottom: 'deltas'"
      "  bottom: 'im_info' top: 'rois' proposal_param { ratio: 1 scale: 8 } }",
      "proposal", "Proposal", "anchors");
}

TEST(OnnxExportTest, GlobalPoolingMaskIsRefused) {
  ExpectRefused(
      "layer { name: 'data' type: 'Input' top: 'data'"
      "  input_param { shape { dim: 1 dim: 2 dim: 4 dim: 4 } } }"
      "layer { name: 'pool' type: 'Pooling' bottom: 'data' top: 'pool' top: 'mask'"
      "  pooling_param { pool: MAX global_pooling: true } }",
      "pool", "Pooling", "mask");
}

// Caffe's mask (index within each plane, as a float) from MaxPool's Indices.
TEST(OnnxExportTest, PoolingMaskComesFromMaxPoolIndices) {
  const std::unique_ptr<Net<float>> net = TestNet(
      "layer { name: 'data' type: 'Input' top: 'data'"
      "  input_param { shape { dim: 1 dim: 2 dim: 4 dim: 4 } } }"
      "layer { name: 'pool' type: 'Pooling' bottom: 'data' top: 'pool' top: 'mask'"
      "  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }");
  const onnx::GraphProto graph = Export(*net).graph();
  std::vector<std::string> ops;
  for (const auto& node : graph.node()) ops.push_back(node.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"MaxPool", "Sub", "Cast"}));
  EXPECT_EQ(graph.node(0).output_size(), 2);
  EXPECT_EQ(graph.node(2).output(0), "mask");
}

TEST(OnnxExportTest, OpsetOutsideTheWrittenRangeIsAnError) {
  const std::unique_ptr<Net<float>> net = TestNet(kTinyNet);
  OnnxExportOptions options;
  options.opset = 9;
  const std::string message = ErrorMessageOf([&] { NetToOnnx(*net, options); });
  EXPECT_NE(message.find("opset 9"), std::string::npos) << message;
}

}  // namespace
}  // namespace crema

#endif  // CREMA_ONNX
