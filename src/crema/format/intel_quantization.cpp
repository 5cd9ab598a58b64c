#include "crema/format/intel_quantization.hpp"

#include <cmath>
#include <string>

#include "crema/common.hpp"

namespace crema {

namespace {
void RequireBitWidth(uint32_t bits, const char* field, const std::string& where) {
  CREMA_REQUIRE(bits >= 1 && bits <= 32, where << ": quantization_param." << field << " is " << bits
                                               << "; a bit width lies in [1, 32]");
}

void RequireScales(const google::protobuf::RepeatedField<float>& scales, const char* field,
                   const std::string& where) {
  for (int i = 0; i < scales.size(); ++i) {
    CREMA_REQUIRE(std::isfinite(scales[i]) && scales[i] > 0,
                  where << ": quantization_param." << field << " value " << i << " is " << scales[i]
                        << "; a scale must be positive and finite");
  }
}
}  // namespace

void CheckIntelQuantization(const LayerParameter& layer) {
  if (!layer.has_quantization_param()) return;
  const std::string where = "layer '" + layer.name() + "' (" + layer.type() + ")";
  const QuantizationParameter& q = layer.quantization_param();
  RequireBitWidth(q.bw_layer_in(), "bw_layer_in", where);
  RequireBitWidth(q.bw_layer_out(), "bw_layer_out", where);
  RequireBitWidth(q.bw_params(), "bw_params", where);
  RequireScales(q.scale_in(), "scale_in", where);
  RequireScales(q.scale_out(), "scale_out", where);
  RequireScales(q.scale_params(), "scale_params", where);
  LOG(INFO) << where << ": Intel's quantization_param (" << q.bw_layer_in() << "-bit input, "
            << q.bw_params() << "-bit weights) read; Crema computes the layer in float";
}

}  // namespace crema
