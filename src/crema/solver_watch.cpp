#include "crema/solver_watch.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "crema/common.hpp"
#include "crema/util/math_functions.hpp"

namespace crema {

namespace {

// A value is not finite exactly when its exponent bits are all ones (IEEE
// 754). OR-ing that test over the values is an integer reduction the
// compiler vectorises: one pass at memory speed, every iteration.
template <typename Dtype, typename Bits>
bool AllFiniteBits(const Dtype* values, size_t count, Bits exponent) {
  static_assert(sizeof(Dtype) == sizeof(Bits), "one integer per value");
  unsigned any = 0;
  for (size_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, values + i, sizeof(bits));
    any |= static_cast<unsigned>((bits & exponent) == exponent);
  }
  return any == 0;
}

bool AllFinite(const float* values, size_t count) {
  return AllFiniteBits(values, count, uint32_t(0x7F800000u));
}
bool AllFinite(const double* values, size_t count) {
  return AllFiniteBits(values, count, uint64_t(0x7FF0000000000000ull));
}

template <typename Dtype>
std::string LayerName(const Net<Dtype>& net, size_t layer) {
  return "'" + net.layer_names()[layer] + "' (" + net.layers()[layer]->type() + ")";
}

// The first layer, in forward order, with a top whose values are not finite.
template <typename Dtype>
std::string FirstNonFiniteOutput(const Net<Dtype>& net) {
  for (size_t layer = 0; layer < net.layers().size(); ++layer) {
    for (size_t t = 0; t < net.top_vecs()[layer].size(); ++t) {
      const Blob<Dtype>& top = *net.top_vecs()[layer][t];
      if (AllFinite(top.cpu_data(), top.count())) continue;
      const std::string name = net.blob_names()[net.top_id_vecs()[layer][t]];
      if (net.bottom_vecs()[layer].empty()) {
        return "the input layer " + LayerName(net, layer) + " gives non-finite values in '" + name +
               "': NaN or infinity in the data";
      }
      return "the first layer whose output is not finite is " + LayerName(net, layer) + ", top '" +
             name + "'";
    }
  }
  return "";
}

// The first layer, in backward order, whose parameter or bottom gradient is
// not finite.
template <typename Dtype>
std::string FirstNonFiniteGradient(const Net<Dtype>& net) {
  for (size_t layer = net.layers().size(); layer-- > 0;) {
    if (!net.layer_need_backward()[layer]) continue;
    for (const auto& param : net.layers()[layer]->blobs()) {
      if (!AllFinite(param->cpu_diff(), param->count())) {
        return "the first layer (in backward order) whose parameter gradient is not finite is " +
               LayerName(net, layer);
      }
    }
    for (size_t b = 0; b < net.bottom_vecs()[layer].size(); ++b) {
      if (!net.bottom_need_backward()[layer][b]) continue;
      const Blob<Dtype>& bottom = *net.bottom_vecs()[layer][b];
      if (!AllFinite(bottom.cpu_diff(), bottom.count())) {
        return "the first layer (in backward order) whose input gradient is not finite is " +
               LayerName(net, layer);
      }
    }
  }
  return "";
}

}  // namespace

template <typename Dtype>
void RequireLoss(const Net<Dtype>& net, const std::string& origin) {
  for (const Dtype weight : net.blob_loss_weights()) {
    if (weight != 0) return;
  }
  const std::string name = net.name().empty() ? "" : " '" + net.name() + "'";
  CREMA_FAIL(origin << ": the training net" << name
                    << " has no loss (no output with a loss weight), so training would change "
                       "nothing; add a loss layer, or set allow_no_loss: true in the solver");
}

template <typename Dtype>
bool GradientsFinite(const Net<Dtype>& net, SyncedMemory* flag) {
  CHECK_EQ(flag->size(), sizeof(int)) << "the flag holds one int";
  if (Context::mode() == Context::GPU) {
#ifdef CREMA_CUDA
    // On the device: every gradient raises the one flag; one copy back.
    int* device_flag = static_cast<int*>(flag->mutable_gpu_data());
    gpu_memset(sizeof(int), 0, device_flag);
    for (const Blob<Dtype>* param : net.learnable_params()) {
      gpu_flag_nonfinite(param->count(), param->gpu_diff(), device_flag);
    }
    return *static_cast<const int*>(flag->cpu_data()) == 0;
#endif
  }
  for (const Blob<Dtype>* param : net.learnable_params()) {
    if (!AllFinite(param->cpu_diff(), param->count())) return false;
  }
  return true;
}

template <typename Dtype>
std::string FirstNonFinite(const Net<Dtype>& net) {
  const std::string output = FirstNonFiniteOutput(net);
  return output.empty() ? FirstNonFiniteGradient(net) : output;
}

#define CREMA_INSTANTIATE_WATCH(Dtype)                                     \
  template void RequireLoss<Dtype>(const Net<Dtype>&, const std::string&); \
  template bool GradientsFinite<Dtype>(const Net<Dtype>&, SyncedMemory*);  \
  template std::string FirstNonFinite<Dtype>(const Net<Dtype>&);
CREMA_INSTANTIATE_WATCH(float)
CREMA_INSTANTIATE_WATCH(double)

}  // namespace crema
