// The small nets the weights and solver-state harnesses load files into:
// each kind of parameter layer the usual models have (convolution with bias,
// inner product, batch normalisation with its three statistics blobs).
#ifndef CREMA_TESTS_FUZZ_SMALL_NETS_HPP_
#define CREMA_TESTS_FUZZ_SMALL_NETS_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "crema/net.hpp"
#include "crema/util/io.hpp"
#include "fuzz_common.hpp"

namespace crema {
namespace fuzz {

constexpr char kSmallDeployNet[] = R"(
  name: "small"
  layer { name: "data" type: "Input" top: "data"
          input_param { shape { dim: 2 dim: 1 dim: 6 dim: 6 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
          convolution_param { num_output: 2 kernel_size: 3
                              weight_filler { type: "xavier" } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "ip1" type: "InnerProduct" bottom: "conv1" top: "ip1"
          inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
  layer { name: "prob" type: "Softmax" bottom: "ip1" top: "prob" }
)";

constexpr char kSmallTrainNet[] = R"(
  name: "small"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
          dummy_data_param { shape { dim: 2 dim: 1 dim: 6 dim: 6 } shape { dim: 2 }
                             data_filler { type: "gaussian" }
                             data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
          convolution_param { num_output: 2 kernel_size: 3
                              weight_filler { type: "xavier" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "conv1" top: "ip1"
          inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip1" bottom: "label" top: "loss" }
)";

// The deploy net, built quietly in the TEST phase.
inline std::unique_ptr<Net<float>> SmallDeployNet() {
  NetParameter param;
  ReadProtoFromString(kSmallDeployNet, "small net", &param);
  param.mutable_state()->set_phase(TEST);
  NetOptions<float> options;
  options.log = false;
  return std::unique_ptr<Net<float>>(new Net<float>(param, options));
}

// The weights harnesses' body: the bytes as a weights file of this
// extension, copied into the small net, which then runs.
inline void CopyWeightsIntoSmallNet(const uint8_t* data, size_t size,
                                    const std::string& extension) {
  static std::unique_ptr<Net<float>> net = SmallDeployNet();
  const std::string path = WorkDir() + "/input" + extension;
  WriteFile(path, data, size);
  try {
    net->CopyTrainedLayersFrom(path);
    net->Forward();
  } catch (const Error&) {
  }
}

}  // namespace fuzz
}  // namespace crema

#endif  // CREMA_TESTS_FUZZ_SMALL_NETS_HPP_
