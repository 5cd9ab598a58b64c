// The forks' fields when a net or solver file sets them (format/fork_fields):
// one the fork_use option marks REFUSED is an error naming the layer, the
// field, its value and the fork when it differs from its default, and
// accepted at its default; IGNORED ones are accepted; a REFUSED enum value is
// an error; a solver's fields are judged alike; Intel's quantization_param is
// read and checked, and the layer computes in float.
#include <gtest/gtest.h>

#include <string>

#include "crema/net.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

std::string NetError(const std::string& layer) {
  return ErrorMessageOf([&] {
    NetParameter param = ParseNet(
        "name: 'n' layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 1 dim: 2 "
        "dim: 4 dim: 4 } } } " +
        layer);
    param.mutable_state()->set_phase(TEST);
    Net<float> net(param);
  });
}

TEST(ForkFieldsTest, RefusedFieldsNameLayerFieldValueAndFork) {
  // Intel's fused ReLU in a convolution changes the arithmetic; Crema lacks it.
  const std::string message = NetError(
      "layer { name: 'c' type: 'Convolution' bottom: 'x' top: 'y' convolution_param { "
      "num_output: 2 kernel_size: 1 relu: true } }");
  for (const char* part : {"layer 'c' (Convolution)", "convolution_param.relu: true", "Intel"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " missing from: " << message;
  }
  // At its default it changes nothing: accepted.
  EXPECT_EQ(NetError("layer { name: 'c' type: 'Convolution' bottom: 'x' top: 'y' "
                     "convolution_param { num_output: 2 kernel_size: 1 relu: false } }"),
            "");
  // A whole fork message of a layer Crema does not implement (DeepLab's CRF).
  EXPECT_NE(NetError("layer { name: 'crf' type: 'DenseCRF' bottom: 'x' top: 'y' "
                     "dense_crf_param { } }")
                .find("dense_crf_param is from PSPNet, DeepLab v2"),
            std::string::npos);
  // A REFUSED enum value: MobileNet-YOLO's boxes-and-segmentation records.
  const std::string anno = NetError(
      "layer { name: 'd' type: 'AnnotatedData' top: 'd' data_param { source: 'x' batch_size: 1 } "
      "annotated_data_param { anno_type: BBOXandSeg } }");
  EXPECT_NE(anno.find("annotated_data_param.anno_type: BBOXandSeg is from MobileNet-YOLO"),
            std::string::npos)
      << anno;
}

TEST(ForkFieldsTest, IgnoredFieldsAreAccepted) {
  // NVCaffe's per-layer types and cuDNN algorithm hints, Intel's engine string.
  EXPECT_EQ(NetError("layer { name: 'c' type: 'Convolution' bottom: 'x' top: 'y' "
                     "forward_type: FLOAT16 engine: 'MKLDNN' convolution_param { num_output: 2 "
                     "kernel_size: 1 cudnn_convolution_algo_seeker: GET } }"),
            "");
}

TEST(ForkFieldsTest, SolverFieldsAreJudgedAlike) {
  SolverParameter param;
  ReadProtoFromString("base_lr: 0.1 lr_policy: 'fixed' max_iter: 1 momentum_policy: 'poly'",
                      "solver", &param);
  ReadProtoFromString(
      "layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 1 } } }", "net",
      param.mutable_net_param());
  const std::string message = ErrorMessageOf([&] { CreateSolver<float>(param); });
  EXPECT_NE(message.find("solver: momentum_policy: \"poly\" is from NVCaffe"), std::string::npos)
      << message;
}

TEST(ForkFieldsTest, IntelQuantizationIsCheckedAndComputedInFloat) {
  const std::string conv =
      "layer { name: 'c' type: 'Convolution' bottom: 'x' top: 'y' convolution_param { "
      "num_output: 2 kernel_size: 1 } quantization_param { bw_layer_in: 8 bw_params: 8 "
      "scale_in: 127 scale_params: 80 scale_params: 90 QUANT } }";
  auto with = [&](const std::string& extra) {
    std::string text = conv;
    text.replace(text.find("QUANT"), 5, extra);
    return NetError(text);
  };
  EXPECT_EQ(with(""), "");
  EXPECT_NE(with("bw_layer_out: 0").find("quantization_param.bw_layer_out is 0"),
            std::string::npos);
  EXPECT_NE(with("scale_out: -1").find("quantization_param.scale_out value 0 is -1"),
            std::string::npos);
}

}  // namespace
}  // namespace crema
