#include "crema/export/onnx_export.hpp"

#include <string>

#include "crema/common.hpp"

#ifndef CREMA_ONNX

namespace crema {

std::string NetToOnnx(const Net<float>&, const OnnxExportOptions&) {
  CREMA_FAIL("this Crema was built without ONNX (apt-get install libonnx-dev and rebuild)");
}

void ExportOnnx(const std::string&, const std::string&, const std::string&,
                const OnnxExportOptions&) {
  CREMA_FAIL("this Crema was built without ONNX (apt-get install libonnx-dev and rebuild)");
}

}  // namespace crema

#else  // CREMA_ONNX

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "crema/util/io.hpp"

namespace crema {

namespace {

using Shape = std::vector<int64_t>;

Shape ToShape(const std::vector<int>& dims) { return Shape(dims.begin(), dims.end()); }

void SetInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void SetInts(onnx::NodeProto* node, const std::string& name, const Shape& values) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

void SetFloat(onnx::NodeProto* node, const std::string& name, float value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(value);
}

void SetString(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

void SetTensorType(onnx::ValueInfoProto* info, const Shape& shape) {
  onnx::TypeProto::Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : shape) tensor->mutable_shape()->add_dim()->set_dim_value(dim);
}

// The graph under construction and its value names. Caffe blobs are
// rewritten in place (top == bottom); ONNX values are written once. The last
// write of a blob takes the blob's own name (so the graph's outputs are named
// as the net's), each earlier one a fresh "<blob>/<layer>" name.
class OnnxGraphBuilder {
 public:
  OnnxGraphBuilder(const Net<float>& net, onnx::GraphProto* graph) : graph_(graph) {
    for (const std::string& blob : net.blob_names()) used_.insert(blob);
    for (const auto& ids : net.top_id_vecs()) {
      for (int id : ids) ++writes_left_[net.blob_names()[id]];
    }
  }

  // A name no value has yet.
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  // The value a layer writes to its top blob: the blob's own name for its
  // last write, unless an input holds that name.
  std::string Define(const std::string& blob, const std::string& layer) {
    const bool last = --writes_left_[blob] == 0;
    const std::string name = last && !inputs_.count(blob) ? blob : Fresh(blob + "/" + layer);
    current_[blob] = name;
    return name;
  }

  // A net input's value: always the blob's own name, so that a user feeds
  // the graph by the names the net has (later in-place writes get others).
  std::string DefineInput(const std::string& blob) {
    --writes_left_[blob];
    inputs_.insert(blob);
    current_[blob] = blob;
    return blob;
  }

  // The value a blob holds now.
  const std::string& Value(const std::string& blob) const { return current_.at(blob); }
  void Alias(const std::string& blob, const std::string& value) {
    --writes_left_[blob];
    current_[blob] = value;
  }

  std::string FloatConstant(const std::string& base, const Shape& dims, const float* data) {
    return DefineConstant(Fresh(base), dims, data);
  }

  // An initializer under a name already given out (Fresh, or a top's Define).
  std::string DefineConstant(const std::string& name, const Shape& dims, const float* data) {
    onnx::TensorProto* tensor = graph_->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t dim : dims) {
      tensor->add_dims(dim);
      count *= dim;
    }
    // raw_data is little-endian, as the floats of the machines Crema runs on.
    tensor->set_raw_data(data, count * sizeof(float));
    return tensor->name();
  }

  std::string ScalarConstant(const std::string& base, float value) {
    return FloatConstant(base, {}, &value);
  }

  std::string Int64Constant(const std::string& base, const Shape& values) {
    return Int64Tensor(base, {static_cast<int64_t>(values.size())}, values);
  }

  // An int64 initializer of shape dims holding values (row-major).
  std::string Int64Tensor(const std::string& base, const Shape& dims, const Shape& values) {
    onnx::TensorProto* tensor = graph_->add_initializer();
    tensor->set_name(Fresh(base));
    tensor->set_data_type(onnx::TensorProto::INT64);
    for (int64_t dim : dims) tensor->add_dims(dim);
    for (int64_t value : values) tensor->add_int64_data(value);
    return tensor->name();
  }

  onnx::NodeProto* Node(const std::string& op, const std::string& layer,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    onnx::NodeProto* node = graph_->add_node();
    node->set_op_type(op);
    node->set_name(Fresh(layer + "/" + op));
    for (const std::string& input : inputs) node->add_input(input);
    for (const std::string& output : outputs) node->add_output(output);
    return node;
  }

  void AddInput(const std::string& name, const Shape& shape) {
    onnx::ValueInfoProto* input = graph_->add_input();
    input->set_name(name);
    SetTensorType(input, shape);
  }

  void AddOutput(const std::string& name, const Shape& shape) {
    onnx::ValueInfoProto* output = graph_->add_output();
    output->set_name(name);
    SetTensorType(output, shape);
    const auto dynamic = dynamic_axes_.find(name);
    if (dynamic == dynamic_axes_.end()) return;
    onnx::TensorShapeProto::Dimension* dim =
        output->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(
            dynamic->second.first);
    dim->clear_dim_value();
    dim->set_dim_param(dynamic->second.second);
  }

  // Axis `axis` of value `name` is known only when the model runs (its
  // symbolic name is dim_param), e.g. the number of detections.
  void SetDynamicAxis(const std::string& name, int axis, const std::string& dim_param) {
    dynamic_axes_[name] = {axis, dim_param};
  }

 private:
  onnx::GraphProto* graph_;
  std::set<std::string> used_;
  std::set<std::string> inputs_;  // blobs whose own name a graph input holds
  std::map<std::string, int> writes_left_;
  std::map<std::string, std::string> current_;
  std::map<std::string, std::pair<int, std::string> > dynamic_axes_;
};

// One Caffe layer being written: its ONNX inputs and outputs and their shapes.
struct LayerExport {
  OnnxGraphBuilder& graph;
  Layer<float>& layer;
  const LayerParameter& param;
  // The net's blobs of this layer (PriorBox runs its forward pass to write
  // its boxes as a constant).
  const std::vector<Blob<float>*>& bottom_blobs;
  const std::vector<Blob<float>*>& top_blobs;
  std::vector<std::string> bottoms;
  std::vector<Shape> bottom_shapes;
  std::vector<std::string> tops;
  std::vector<Shape> top_shapes;

  const std::string& name() const { return param.name(); }
  // A value inside this layer's lowering (between its ONNX nodes).
  std::string Temp(const std::string& what) { return graph.Fresh(name() + "/" + what); }
  std::string Param(int index, const std::string& what) {
    const Blob<float>& blob = *layer.blobs().at(index);
    return graph.FloatConstant(name() + "/" + what, ToShape(blob.shape()), blob.cpu_data());
  }
  // Blob `index` reshaped to broadcast against bottom 0 from `axis` on.
  std::string BroadcastBlob(int index, int axis, const std::string& what) {
    const Blob<float>& blob = *layer.blobs().at(index);
    return graph.FloatConstant(name() + "/" + what, BroadcastShape(ToShape(blob.shape()), axis),
                               blob.cpu_data());
  }
  // ONNX broadcasts from the last axis; Caffe's per-channel blobs start at
  // `axis`: trailing 1s align them there.
  Shape BroadcastShape(Shape shape, int axis) const {
    const size_t rank = bottom_shapes[0].size() - axis;
    CREMA_REQUIRE(shape.size() <= rank, "layer '" << name() << "': parameter of rank "
                                                  << shape.size() << " from axis " << axis);
    shape.resize(rank, 1);
    return shape;
  }
  int Axis(int axis) const {
    const int rank = static_cast<int>(bottom_shapes[0].size());
    return axis < 0 ? axis + rank : axis;
  }
  // A one-node layer: bottoms in, top 0 out.
  onnx::NodeProto* Unary(const std::string& op) {
    return graph.Node(op, name(), {bottoms[0]}, {tops[0]});
  }
};

[[noreturn]] void Refuse(const LayerExport& e, const std::string& why) {
  CREMA_FAIL("layer '" << e.name() << "' of type " << e.param.type()
                       << " cannot be written as ONNX: " << why);
}

// ---- Vision layers ------------------------------------------------------

// Caffe's per-axis value of a spatial field: the _h/_w pair where set (2-D
// only), else the repeated field (one value for all axes or one per axis),
// else the default.
Shape SpatialValues(const LayerExport& e, const google::protobuf::RepeatedField<uint32_t>& values,
                    bool has_hw, uint32_t h, uint32_t w, int axes, int64_t fallback) {
  if (has_hw) {
    if (axes != 2) Refuse(e, "_h/_w fields on a " + std::to_string(axes) + "-D input");
    return {h, w};
  }
  if (values.empty()) return Shape(axes, fallback);
  if (values.size() == 1) return Shape(axes, values[0]);
  CREMA_REQUIRE(values.size() == axes, "layer '" << e.name() << "': " << values.size()
                                                 << " values for " << axes << " axes");
  return Shape(values.begin(), values.end());
}

Shape Twice(const Shape& pads) {
  Shape both = pads;
  both.insert(both.end(), pads.begin(), pads.end());
  return both;
}

// Convolution and Deconvolution (ConvTranspose): Caffe's weights are laid
// out as ONNX's, (out, in/group, k...) and (in, out/group, k...). The
// depthwise types of the MobileNet forks are Convolutions with one group per
// input channel.
void ExportConvolution(LayerExport& e, const std::string& op, int64_t group) {
  const ConvolutionParameter& p = e.param.convolution_param();
  if (e.Axis(p.axis()) != 1) Refuse(e, "channels on an axis other than 1");
  if (e.bottoms.size() != 1) Refuse(e, "several bottoms");
  const int axes = static_cast<int>(e.bottom_shapes[0].size()) - 2;
  const Shape kernel =
      SpatialValues(e, p.kernel_size(), p.has_kernel_h(), p.kernel_h(), p.kernel_w(), axes, 0);
  const Shape stride =
      SpatialValues(e, p.stride(), p.has_stride_h(), p.stride_h(), p.stride_w(), axes, 1);
  const Shape pad = SpatialValues(e, p.pad(), p.has_pad_h(), p.pad_h(), p.pad_w(), axes, 0);
  const Shape dilation = SpatialValues(e, p.dilation(), false, 0, 0, axes, 1);
  std::vector<std::string> inputs = {e.bottoms[0], e.Param(0, "W")};
  if (p.bias_term()) inputs.push_back(e.Param(1, "B"));
  onnx::NodeProto* node = e.graph.Node(op, e.name(), inputs, {e.tops[0]});
  SetInts(node, "kernel_shape", kernel);
  SetInts(node, "strides", stride);
  SetInts(node, "pads", Twice(pad));
  SetInts(node, "dilations", dilation);
  SetInt(node, "group", group);
}

struct PoolWindow {
  int64_t kernel, stride, pad, size, pooled;
};

// The padding after the input that makes ONNX's floor-rounded size Caffe's
// ceil-rounded (and clipped) one: set it rather than ceil_mode, whose
// clipping of the last window differs between ONNX versions and runtimes.
int64_t EndPad(const LayerExport& e, const PoolWindow& w, int64_t padded_before, int64_t size) {
  const int64_t end =
      std::max<int64_t>(0, (w.pooled - 1) * w.stride + w.kernel - size - padded_before);
  if ((size + padded_before + end - w.kernel) / w.stride + 1 != w.pooled) {
    Refuse(e, "its last window lies wholly in the padding");
  }
  // Without padding, Caffe's ceil rounding keeps a last window that starts
  // past the input (a stride above the kernel): it covers no input cell, and
  // ONNX allows no padding as wide as the kernel.
  if (end >= w.kernel) {
    Refuse(e, "its last window starts past the input (ceil rounding with stride " +
                  std::to_string(w.stride) + " above kernel " + std::to_string(w.kernel) +
                  "), which ONNX pooling cannot express");
  }
  return end;
}

std::vector<PoolWindow> PoolWindows(const LayerExport& e) {
  const PoolingParameter& p = e.param.pooling_param();
  if (e.bottom_shapes[0].size() != 4) Refuse(e, "pooling of a blob that is not 4-D");
  const Shape k = p.has_kernel_h() ? Shape{p.kernel_h(), p.kernel_w()}
                                   : Shape{p.kernel_size(), p.kernel_size()};
  const Shape s =
      p.has_stride_h() ? Shape{p.stride_h(), p.stride_w()} : Shape{p.stride(), p.stride()};
  const Shape pad = p.has_pad_h() ? Shape{p.pad_h(), p.pad_w()} : Shape{p.pad(), p.pad()};
  std::vector<PoolWindow> windows;
  for (int i = 0; i < 2; ++i) {
    windows.push_back({k[i], s[i], pad[i], e.bottom_shapes[0][2 + i], e.top_shapes[0][2 + i]});
  }
  return windows;
}

void SetPoolWindow(onnx::NodeProto* node, const std::vector<PoolWindow>& windows,
                   const Shape& pads) {
  SetInts(node, "kernel_shape", {windows[0].kernel, windows[1].kernel});
  SetInts(node, "strides", {windows[0].stride, windows[1].stride});
  SetInts(node, "pads", pads);
}

// Caffe's mask top holds each maximum's index within its [H, W] plane as a
// float; ONNX's Indices count over the whole [N, C, H, W] input (padding not
// counted): subtracting each plane's first index gives Caffe's.
void ExportPoolingMask(LayerExport& e, const std::string& indices) {
  const Shape& input = e.bottom_shapes[0];
  const int64_t planes = input[0] * input[1], plane = input[2] * input[3];
  Shape firsts(planes);
  for (int64_t i = 0; i < planes; ++i) firsts[i] = i * plane;
  const std::string first =
      e.graph.Int64Tensor(e.name() + "/plane_first", {input[0], input[1], 1, 1}, firsts);
  const std::string in_plane = e.Temp("plane_index");
  e.graph.Node("Sub", e.name(), {indices, first}, {in_plane});
  SetInt(e.graph.Node("Cast", e.name(), {in_plane}, {e.tops[1]}), "to", onnx::TensorProto::FLOAT);
}

// MAX: padding never wins, as in Caffe (which clips the window to the input).
// A second top (the mask) comes from MaxPool's Indices.
void ExportMaxPool(LayerExport& e, const std::vector<PoolWindow>& windows) {
  Shape pads = {windows[0].pad, windows[1].pad};
  for (const PoolWindow& w : windows) pads.push_back(EndPad(e, w, w.pad, w.size));
  std::vector<std::string> outputs = {e.tops[0]};
  if (e.tops.size() == 2) outputs.push_back(e.Temp("indices"));
  SetPoolWindow(e.graph.Node("MaxPool", e.name(), {e.bottoms[0]}, outputs), windows, pads);
  if (e.tops.size() == 2) ExportPoolingMask(e, outputs[1]);
}

// AVE: Caffe divides by the window clipped to the padded input (zeros of the
// padding counted, cells past it not). Padding with zeros first and then
// counting only cells inside (count_include_pad=0) gives that divisor, also
// for the last window, which ONNX's count_include_pad=1 would not.
void ExportAvePool(LayerExport& e, const std::vector<PoolWindow>& windows) {
  std::string input = e.bottoms[0];
  if (windows[0].pad > 0 || windows[1].pad > 0) {
    const Shape pads = {0, 0, windows[0].pad, windows[1].pad, 0, 0, windows[0].pad, windows[1].pad};
    const std::string padded = e.Temp("padded");
    e.graph.Node("Pad", e.name(), {input, e.graph.Int64Constant(e.name() + "/pads", pads)},
                 {padded});
    input = padded;
  }
  Shape pads = {0, 0};
  for (const PoolWindow& w : windows) pads.push_back(EndPad(e, w, 0, w.size + 2 * w.pad));
  onnx::NodeProto* node = e.graph.Node("AveragePool", e.name(), {input}, {e.tops[0]});
  SetPoolWindow(node, windows, pads);
  SetInt(node, "count_include_pad", 0);
}

void ExportPooling(LayerExport& e) {
  const PoolingParameter& p = e.param.pooling_param();
  const bool max = p.pool() == PoolingParameter::MAX;
  if (!max && p.pool() != PoolingParameter::AVE) Refuse(e, "STOCHASTIC pooling is random");
  if (e.tops.size() == 2 && p.global_pooling()) Refuse(e, "a mask top of global pooling");
  if (p.global_pooling()) {
    e.Unary(max ? "GlobalMaxPool" : "GlobalAveragePool");
    return;
  }
  const std::vector<PoolWindow> windows = PoolWindows(e);
  if (max) {
    ExportMaxPool(e, windows);
  } else {
    ExportAvePool(e, windows);
  }
}

// Caffe's LRN and ONNX's both divide alpha by the window's size.
void ExportLrn(LayerExport& e) {
  const LRNParameter& p = e.param.lrn_param();
  if (p.norm_region() != LRNParameter::ACROSS_CHANNELS) Refuse(e, "WITHIN_CHANNEL LRN");
  onnx::NodeProto* node = e.Unary("LRN");
  SetInt(node, "size", p.local_size());
  SetFloat(node, "alpha", p.alpha());
  SetFloat(node, "beta", p.beta());
  SetFloat(node, "bias", p.k());
}

// ---- Neuron layers ------------------------------------------------------

void ExportRelu(LayerExport& e) {
  const float slope = e.param.relu_param().negative_slope();
  if (slope == 0) {
    e.Unary("Relu");
  } else {
    SetFloat(e.Unary("LeakyRelu"), "alpha", slope);
  }
}

void ExportPrelu(LayerExport& e) {
  // The slopes (one per channel, or one shared) broadcast from axis 1.
  const std::string slope = e.BroadcastBlob(0, 1, "slope");
  e.graph.Node("PRelu", e.name(), {e.bottoms[0], slope}, {e.tops[0]});
}

void ExportElu(LayerExport& e) { SetFloat(e.Unary("Elu"), "alpha", e.param.elu_param().alpha()); }

// x -> scale * x + shift, as nodes only where they change x; `out` is the
// value to write (empty: a fresh one). Returns the value written.
std::string Affine(LayerExport& e, std::string x, float scale, float shift,
                   const std::string& out) {
  const bool last_is_shift = shift != 0;
  if (scale != 1) {
    const std::string y = last_is_shift || out.empty() ? e.Temp("scaled") : out;
    e.graph.Node("Mul", e.name(), {x, e.graph.ScalarConstant(e.name() + "/scale", scale)}, {y});
    x = y;
  }
  if (shift != 0) {
    const std::string y = out.empty() ? e.Temp("shifted") : out;
    e.graph.Node("Add", e.name(), {x, e.graph.ScalarConstant(e.name() + "/shift", shift)}, {y});
    x = y;
  }
  if (!out.empty() && x != out) e.graph.Node("Identity", e.name(), {x}, {out});
  return out.empty() ? x : out;
}

// y = (shift + scale * x) ^ power
void ExportPower(LayerExport& e) {
  const PowerParameter& p = e.param.power_param();
  if (p.power() == 1) {
    Affine(e, e.bottoms[0], p.scale(), p.shift(), e.tops[0]);
    return;
  }
  const std::string base = Affine(e, e.bottoms[0], p.scale(), p.shift(), "");
  e.graph.Node("Pow", e.name(), {base, e.graph.ScalarConstant(e.name() + "/power", p.power())},
               {e.tops[0]});
}

// y = base ^ (shift + scale * x) = exp(ln(base) * (shift + scale * x))
void ExportExp(LayerExport& e) {
  const ExpParameter& p = e.param.exp_param();
  const float log_base = p.base() == -1 ? 1 : std::log(p.base());
  const std::string x = Affine(e, e.bottoms[0], log_base * p.scale(), log_base * p.shift(), "");
  e.graph.Node("Exp", e.name(), {x}, {e.tops[0]});
}

// y = log_base(shift + scale * x) = ln(shift + scale * x) / ln(base)
void ExportLog(LayerExport& e) {
  const LogParameter& p = e.param.log_param();
  const std::string x = Affine(e, e.bottoms[0], p.scale(), p.shift(), "");
  if (p.base() == -1) {
    e.graph.Node("Log", e.name(), {x}, {e.tops[0]});
    return;
  }
  const std::string ln = e.Temp("ln");
  e.graph.Node("Log", e.name(), {x}, {ln});
  Affine(e, ln, 1 / std::log(p.base()), 0, e.tops[0]);
}

// At test time Caffe's Dropout copies (training scaled the kept values);
// with the forks' scale_train: false it multiplies by 1 - dropout_ratio.
void ExportDropout(LayerExport& e) {
  const DropoutParameter& p = e.param.dropout_param();
  if (p.sample_weights_test()) {
    Refuse(e, "sample_weights_test drops values at random at TEST (Monte Carlo dropout)");
  }
  const float scale = p.scale_train() ? 1.0f : 1.0f - p.dropout_ratio();
  Affine(e, e.bottoms[0], scale, 0, e.tops[0]);
}

// ---- Normalization, scale and bias --------------------------------------

// y = (x - mean) / sqrt(var + eps) with Caffe's stored statistics, which are
// sums to divide by the scale-factor blob (0: none accumulated).
void ExportBatchNorm(LayerExport& e) {
  const BatchNormParameter& p = e.param.batch_norm_param();
  if (p.has_use_global_stats() && !p.use_global_stats()) {
    Refuse(e, "use_global_stats: false normalizes by the batch's own statistics");
  }
  const auto& blobs = e.layer.blobs();
  const float stored = blobs[2]->cpu_data()[0];
  const float factor = stored == 0 ? 0 : 1 / stored;
  const int64_t channels = blobs[0]->count();
  std::vector<float> mean(channels), var(channels), scale(channels, 1), shift(channels, 0);
  for (int64_t c = 0; c < channels; ++c) {
    mean[c] = blobs[0]->cpu_data()[c] * factor;
    var[c] = blobs[1]->cpu_data()[c] * factor;
  }
  if (blobs.size() == 5) {  // the forks' scale_bias: a learned scale and bias
    scale.assign(blobs[3]->cpu_data(), blobs[3]->cpu_data() + channels);
    shift.assign(blobs[4]->cpu_data(), blobs[4]->cpu_data() + channels);
  }
  const std::string name = e.name();
  onnx::NodeProto* node =
      e.graph.Node("BatchNormalization", name,
                   {e.bottoms[0], e.graph.FloatConstant(name + "/scale", {channels}, scale.data()),
                    e.graph.FloatConstant(name + "/B", {channels}, shift.data()),
                    e.graph.FloatConstant(name + "/mean", {channels}, mean.data()),
                    e.graph.FloatConstant(name + "/var", {channels}, var.data())},
                   {e.tops[0]});
  SetFloat(node, "epsilon", p.eps());
}

// The factor or term of Scale and Bias: a learned blob, or bottom 1 reshaped
// to broadcast from `axis`.
std::string Operand(LayerExport& e, int blob_index, int axis, const std::string& what) {
  if (e.bottoms.size() == 1) return e.BroadcastBlob(blob_index, axis, what);
  const std::string reshaped = e.Temp(what);
  const Shape shape = e.BroadcastShape(e.bottom_shapes[1], axis);
  e.graph.Node("Reshape", e.name(),
               {e.bottoms[1], e.graph.Int64Constant(e.name() + "/" + what + "_shape", shape)},
               {reshaped});
  return reshaped;
}

void ExportScale(LayerExport& e) {
  const ScaleParameter& p = e.param.scale_param();
  const int axis = e.Axis(p.axis());
  const std::string factor = Operand(e, 0, axis, "scale");
  if (!p.bias_term()) {
    e.graph.Node("Mul", e.name(), {e.bottoms[0], factor}, {e.tops[0]});
    return;
  }
  const std::string scaled = e.Temp("scaled");
  e.graph.Node("Mul", e.name(), {e.bottoms[0], factor}, {scaled});
  const int bias_blob = e.bottoms.size() == 1 ? 1 : 0;
  const std::string bias = e.BroadcastBlob(bias_blob, axis, "bias");
  e.graph.Node("Add", e.name(), {scaled, bias}, {e.tops[0]});
}

void ExportBias(LayerExport& e) {
  const std::string bias = Operand(e, 0, e.Axis(e.param.bias_param().axis()), "bias");
  e.graph.Node("Add", e.name(), {e.bottoms[0], bias}, {e.tops[0]});
}

// ---- Common layers ------------------------------------------------------

// Caffe flattens from `axis` into the inner dimension; Gemm's output is
// reshaped back where the top keeps more than two axes.
void ExportInnerProduct(LayerExport& e) {
  const InnerProductParameter& p = e.param.inner_product_param();
  const std::string flat = e.Temp("flat");
  SetInt(e.graph.Node("Flatten", e.name(), {e.bottoms[0]}, {flat}), "axis", e.Axis(p.axis()));
  const bool reshape = e.top_shapes[0].size() != 2;
  const std::string product = reshape ? e.Temp("product") : e.tops[0];
  std::vector<std::string> inputs = {flat, e.Param(0, "W")};
  if (p.bias_term()) inputs.push_back(e.Param(1, "B"));
  SetInt(e.graph.Node("Gemm", e.name(), inputs, {product}), "transB", p.transpose() ? 0 : 1);
  if (reshape) {
    e.graph.Node("Reshape", e.name(),
                 {product, e.graph.Int64Constant(e.name() + "/shape", e.top_shapes[0])},
                 {e.tops[0]});
  }
}

// Flatten and Reshape: the net knows the top's shape (Caffe's 0 and -1
// resolved), so the ONNX Reshape gets it whole.
void ExportReshape(LayerExport& e) {
  e.graph.Node("Reshape", e.name(),
               {e.bottoms[0], e.graph.Int64Constant(e.name() + "/shape", e.top_shapes[0])},
               {e.tops[0]});
}

void ExportSoftmax(LayerExport& e) {
  SetInt(e.Unary("Softmax"), "axis", e.Axis(e.param.softmax_param().axis()));
}

void ExportConcat(LayerExport& e) {
  const ConcatParameter& p = e.param.concat_param();
  const int axis = p.has_concat_dim() ? static_cast<int>(p.concat_dim()) : e.Axis(p.axis());
  SetInt(e.graph.Node("Concat", e.name(), e.bottoms, {e.tops[0]}), "axis", axis);
}

void ExportSlice(LayerExport& e) {
  const SliceParameter& p = e.param.slice_param();
  const int axis = p.has_slice_dim() ? static_cast<int>(p.slice_dim()) : e.Axis(p.axis());
  Shape sizes;
  for (const Shape& top : e.top_shapes) sizes.push_back(top[axis]);
  onnx::NodeProto* node = e.graph.Node(
      "Split", e.name(), {e.bottoms[0], e.graph.Int64Constant(e.name() + "/sizes", sizes)}, e.tops);
  SetInt(node, "axis", axis);
}

// ONNX's Mul is binary: products and weighted sums are chains.
void ExportEltwiseChain(LayerExport& e, const std::string& op, std::vector<std::string> terms) {
  std::string sum = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    const std::string out = i + 1 == terms.size() ? e.tops[0] : e.Temp(op);
    e.graph.Node(op, e.name(), {sum, terms[i]}, {out});
    sum = out;
  }
}

void ExportEltwise(LayerExport& e) {
  const EltwiseParameter& p = e.param.eltwise_param();
  if (e.bottoms.size() < 2) Refuse(e, "fewer than two bottoms");
  if (p.operation() == EltwiseParameter::PROD) {
    ExportEltwiseChain(e, "Mul", e.bottoms);
  } else if (p.operation() == EltwiseParameter::MAX) {
    e.graph.Node("Max", e.name(), e.bottoms, {e.tops[0]});
  } else {
    std::vector<std::string> terms = e.bottoms;
    for (int i = 0; i < p.coeff_size(); ++i) {
      if (p.coeff(i) != 1) terms[i] = Affine(e, e.bottoms[i], p.coeff(i), 0, "");
    }
    ExportEltwiseChain(e, "Add", terms);
  }
}

// Caffe's ArgMax (top_k 1, indices only) gives float indices; ONNX int64.
void ExportArgMax(LayerExport& e) {
  const ArgMaxParameter& p = e.param.argmax_param();
  if (p.top_k() != 1 || p.out_max_val()) Refuse(e, "top_k > 1 or out_max_val");
  std::string input = e.bottoms[0];
  int axis = p.has_axis() ? e.Axis(p.axis()) : 1;
  if (!p.has_axis()) {  // Caffe takes the argmax over each item's values.
    input = e.Temp("flat");
    SetInt(e.graph.Node("Flatten", e.name(), {e.bottoms[0]}, {input}), "axis", 1);
  }
  const std::string index = e.Temp("index");
  onnx::NodeProto* argmax = e.graph.Node("ArgMax", e.name(), {input}, {index});
  SetInt(argmax, "axis", axis);
  SetInt(argmax, "keepdims", 1);
  const std::string as_float = e.Temp("float_index");
  SetInt(e.graph.Node("Cast", e.name(), {index}, {as_float}), "to", onnx::TensorProto::FLOAT);
  e.graph.Node("Reshape", e.name(),
               {as_float, e.graph.Int64Constant(e.name() + "/shape", e.top_shapes[0])},
               {e.tops[0]});
}

// ---- Layers of Caffe's forks ---------------------------------------------

void ExportDepthwiseConvolution(LayerExport& e) {
  ExportConvolution(e, "Conv", e.bottom_shapes[0].at(1));
}

// ReLU6 (MobileNet v2 forks): min(max(x, 0), 6).
void ExportRelu6(LayerExport& e) {
  e.graph.Node("Clip", e.name(),
               {e.bottoms[0], e.graph.ScalarConstant(e.name() + "/min", 0),
                e.graph.ScalarConstant(e.name() + "/max", 6)},
               {e.tops[0]});
}

// Axpy (SENet): a * x + y, a one value per image and channel of x.
void ExportAxpy(LayerExport& e) {
  Shape a_shape(e.bottom_shapes[1].size(), 1);
  a_shape[0] = e.bottom_shapes[1][0];
  a_shape[1] = e.bottom_shapes[1][1];
  const std::string a = e.Temp("a");
  e.graph.Node("Reshape", e.name(),
               {e.bottoms[0], e.graph.Int64Constant(e.name() + "/a_shape", a_shape)}, {a});
  const std::string scaled = e.Temp("scaled");
  e.graph.Node("Mul", e.name(), {a, e.bottoms[1]}, {scaled});
  e.graph.Node("Add", e.name(), {scaled, e.bottoms[2]}, {e.tops[0]});
}

// ShuffleChannel (ShuffleNet): the channels as a (group, C / group) matrix,
// transposed.
void ExportShuffleChannel(LayerExport& e) {
  const Shape& shape = e.bottom_shapes[0];
  const int64_t group = e.param.shuffle_channel_param().group();
  int64_t inner = 1;
  for (size_t i = 2; i < shape.size(); ++i) inner *= shape[i];
  const std::string grouped = e.Temp("grouped");
  e.graph.Node("Reshape", e.name(),
               {e.bottoms[0], e.graph.Int64Constant(e.name() + "/grouped_shape",
                                                    {shape[0], group, shape[1] / group, inner})},
               {grouped});
  const std::string shuffled = e.Temp("shuffled");
  SetInts(e.graph.Node("Transpose", e.name(), {grouped}, {shuffled}), "perm", {0, 2, 1, 3});
  e.graph.Node("Reshape", e.name(),
               {shuffled, e.graph.Int64Constant(e.name() + "/shape", e.top_shapes[0])},
               {e.tops[0]});
}

// Reorg (YOLOv2): darknet's map (reorg_layer.hpp) is a transpose of two
// readings of memory: the bottom as [N, C', H, s, W, s] and the top as [N,
// s, s, C', H, W] (C' = C / s^2, H and W the bottom's); reverse the inverse.
void ExportReorg(LayerExport& e) {
  const Shape& in = e.bottom_shapes[0];
  const int64_t s = e.param.reorg_param().stride(), reduced = in[1] / (s * s);
  const bool reverse = e.param.reorg_param().reverse();
  const Shape read = reverse ? Shape{in[0], s, s, reduced, in[2], in[3]}
                             : Shape{in[0], reduced, in[2], s, in[3], s};
  const Shape perm = reverse ? Shape{0, 3, 4, 1, 5, 2} : Shape{0, 3, 5, 1, 2, 4};
  const std::string as_read = e.Temp("read"), moved = e.Temp("moved");
  e.graph.Node("Reshape", e.name(),
               {e.bottoms[0], e.graph.Int64Constant(e.name() + "/read_shape", read)}, {as_read});
  SetInts(e.graph.Node("Transpose", e.name(), {as_read}, {moved}), "perm", perm);
  e.graph.Node("Reshape", e.name(),
               {moved, e.graph.Int64Constant(e.name() + "/shape", e.top_shapes[0])}, {e.tops[0]});
}

// Mish: x tanh(softplus(x)) (ONNX's Mish comes with opset 18).
void ExportMish(LayerExport& e) {
  const std::string softplus = e.Temp("softplus"), tanh = e.Temp("tanh");
  e.graph.Node("Softplus", e.name(), {e.bottoms[0]}, {softplus});
  e.graph.Node("Tanh", e.name(), {softplus}, {tanh});
  e.graph.Node("Mul", e.name(), {e.bottoms[0], tanh}, {e.tops[0]});
}

// Permute (SSD): the top's axis i is the bottom's axis order[i]; the axes
// the order leaves out follow in increasing order.
void ExportPermute(LayerExport& e) {
  const int64_t axes = static_cast<int64_t>(e.bottom_shapes[0].size());
  Shape perm;
  for (uint32_t axis : e.param.permute_param().order()) perm.push_back(axis);
  for (int64_t axis = 0; axis < axes; ++axis) {
    if (std::find(perm.begin(), perm.end(), axis) == perm.end()) perm.push_back(axis);
  }
  SetInts(e.Unary("Transpose"), "perm", perm);
}

// Normalize (SSD): x / sqrt(sum of x^2 + eps) times the learned scale; the
// sum runs over each image (across_spatial) or over the channels of each
// position.
void ExportNormalize(LayerExport& e) {
  const NormalizeParameter& p = e.param.norm_param();
  const int64_t rank = static_cast<int64_t>(e.bottom_shapes[0].size());
  Shape axes = {1};
  if (p.across_spatial()) {
    for (int64_t axis = 2; axis < rank; ++axis) axes.push_back(axis);
  }
  const std::string squares = e.Temp("sum_squares");
  onnx::NodeProto* sum = e.graph.Node("ReduceSumSquare", e.name(), {e.bottoms[0]}, {squares});
  SetInts(sum, "axes", axes);
  SetInt(sum, "keepdims", 1);
  const std::string shifted = e.Temp("plus_eps");
  e.graph.Node("Add", e.name(), {squares, e.graph.ScalarConstant(e.name() + "/eps", p.eps())},
               {shifted});
  const std::string norm = e.Temp("norm");
  e.graph.Node("Sqrt", e.name(), {shifted}, {norm});
  const std::string unit = e.Temp("unit");
  e.graph.Node("Div", e.name(), {e.bottoms[0], norm}, {unit});
  // The trained scale holds 1 value (shared) or one per channel, whatever its
  // stored shape.
  const Blob<float>& scale = *e.layer.blobs().at(0);
  const Shape scale_shape = scale.count() == 1 ? Shape{1} : e.BroadcastShape({scale.count()}, 1);
  e.graph.Node("Mul", e.name(),
               {unit, e.graph.FloatConstant(e.name() + "/scale", scale_shape, scale.cpu_data())},
               {e.tops[0]});
}

// PriorBox (SSD): the boxes depend on the bottoms' shapes only, which the
// model fixes, so the layer's own forward pass writes them once as a constant.
void ExportPriorBox(LayerExport& e) {
  e.layer.Forward(e.bottom_blobs, e.top_blobs);
  const Blob<float>& boxes = *e.top_blobs[0];
  e.graph.DefineConstant(e.tops[0], ToShape(boxes.shape()), boxes.cpu_data());
}

// Interp (DeepLab, PSPNet): crop by -pad_beg / -pad_end, then bilinear
// resize with the corners aligned to the top's size (which the net has
// computed from whichever parameter or bottom gives it).
void ExportInterp(LayerExport& e) {
  const InterpParameter& p = e.param.interp_param();
  std::string input = e.bottoms[0];
  if (p.pad_beg() != 0 || p.pad_end() != 0) {
    const Shape& shape = e.bottom_shapes[0];
    const int64_t begin = -p.pad_beg(), end = p.pad_end();
    input = e.Temp("cropped");
    e.graph.Node("Slice", e.name(),
                 {e.bottoms[0], e.graph.Int64Constant(e.name() + "/starts", {begin, begin}),
                  e.graph.Int64Constant(e.name() + "/ends", {shape[2] + end, shape[3] + end}),
                  e.graph.Int64Constant(e.name() + "/axes", {2, 3})},
                 {input});
  }
  onnx::NodeProto* resize = e.graph.Node(
      "Resize", e.name(),
      {input, "", "", e.graph.Int64Constant(e.name() + "/sizes", e.top_shapes[0])}, {e.tops[0]});
  SetString(resize, "mode", "linear");
  SetString(resize, "coordinate_transformation_mode", "align_corners");
}

// Upsample (SegNet): each value written at its mask index within its plane
// of the top; ONNX's MaxUnpool takes indices over the whole top, so each
// plane's first index is added.
// The YOLO forks' Upsample: nearest neighbour, top[h][w] = bottom[h / s][w / s],
// which Resize's asymmetric coordinates with floor rounding compute exactly.
void ExportNearestUpsample(LayerExport& e) {
  const float scale = static_cast<float>(e.param.upsample_param().scale());
  const float scales[4] = {1, 1, scale, scale};
  onnx::NodeProto* resize = e.graph.Node(
      "Resize", e.name(),
      {e.bottoms[0], "", e.graph.FloatConstant(e.name() + "/scales", {4}, scales)}, {e.tops[0]});
  SetString(resize, "mode", "nearest");
  SetString(resize, "coordinate_transformation_mode", "asymmetric");
  SetString(resize, "nearest_mode", "floor");
}

// SegNet's Upsample (max unpooling by the pooling mask), or the YOLO forks'.
void ExportUpsample(LayerExport& e) {
  if (e.bottoms.size() == 1) {
    ExportNearestUpsample(e);
    return;
  }
  const Shape& top = e.top_shapes[0];
  const int64_t planes = top[0] * top[1], plane = top[2] * top[3];
  Shape firsts(planes);
  for (int64_t i = 0; i < planes; ++i) firsts[i] = i * plane;
  const std::string in_plane = e.Temp("plane_index");
  SetInt(e.graph.Node("Cast", e.name(), {e.bottoms[1]}, {in_plane}), "to",
         onnx::TensorProto::INT64);
  const std::string index = e.Temp("index");
  e.graph.Node(
      "Add", e.name(),
      {in_plane, e.graph.Int64Tensor(e.name() + "/plane_first", {top[0], top[1], 1, 1}, firsts)},
      {index});
  onnx::NodeProto* unpool = e.graph.Node(
      "MaxUnpool", e.name(),
      {e.bottoms[0], index, e.graph.Int64Constant(e.name() + "/output_shape", top)}, {e.tops[0]});
  // output_shape gives the size; a 1x1 window keeps the size ONNX infers from
  // the window (H, W) at or below it, as MaxUnpool requires.
  SetInts(unpool, "kernel_shape", {1, 1});
  SetInts(unpool, "strides", {1, 1});
}

// A per-channel [1, C, 1, ...] blob as a flat [C] initializer (broadcast:
// [C, 1, ...] to multiply a bottom from axis 1).
std::string ChannelVector(LayerExport& e, int index, const std::string& what,
                          bool broadcast = false) {
  const Blob<float>& blob = *e.layer.blobs().at(index);
  const Shape shape = broadcast ? e.BroadcastShape({blob.count()}, 1) : Shape{blob.count()};
  return e.graph.FloatConstant(e.name() + "/" + what, shape, blob.cpu_data());
}

// BN of the segmentation forks. PSPNet / TSN: in the TEST phase,
// slope * (x - mean) / sqrt(variance + eps) + bias with the stored
// statistics. SegNet: INFERENCE is scale * x + shift; LEARN normalises by
// the batch's statistics in every phase, which a deployed model cannot.
void ExportBn(LayerExport& e) {
  const BNParameter& p = e.param.bn_param();
  const bool segnet = p.has_scale_filler() || p.has_shift_filler() || p.has_bn_mode();
  if (segnet && p.bn_mode() != BNParameter::INFERENCE) {
    Refuse(e,
           "SegNet's bn_mode LEARN normalises by the batch's own statistics in every phase "
           "(fold them into scale and shift and use bn_mode: INFERENCE)");
  }
  if (segnet) {
    const std::string scaled = e.Temp("scaled");
    e.graph.Node("Mul", e.name(), {e.bottoms[0], ChannelVector(e, 0, "scale", true)}, {scaled});
    e.graph.Node("Add", e.name(), {scaled, ChannelVector(e, 1, "shift", true)}, {e.tops[0]});
    return;
  }
  onnx::NodeProto* node =
      e.graph.Node("BatchNormalization", e.name(),
                   {e.bottoms[0], ChannelVector(e, 0, "slope"), ChannelVector(e, 1, "bias"),
                    ChannelVector(e, 2, "mean"), ChannelVector(e, 3, "variance")},
                   {e.tops[0]});
  SetFloat(node, "epsilon", p.eps());
}

// ROIPooling (py-faster-rcnn): ONNX's MaxRoiPool is the same operation
// (corners rounded after scaling, bins floor/ceil, max, 0 for an empty bin).
void ExportRoiPooling(LayerExport& e) {
  const ROIPoolingParameter& p = e.param.roi_pooling_param();
  std::string rois = e.bottoms[1];
  if (e.bottom_shapes[1].size() != 2) {
    rois = e.Temp("rois");
    e.graph.Node(
        "Reshape", e.name(),
        {e.bottoms[1], e.graph.Int64Constant(e.name() + "/rois_shape", {e.bottom_shapes[1][0], 5})},
        {rois});
  }
  onnx::NodeProto* node = e.graph.Node("MaxRoiPool", e.name(), {e.bottoms[0], rois}, {e.tops[0]});
  SetInts(node, "pooled_shape", {p.pooled_h(), p.pooled_w()});
  SetFloat(node, "spatial_scale", p.spatial_scale());
}

// ---- DetectionOutput (SSD) ------------------------------------------------
//
// Box decoding, then ONNX's NonMaxSuppression with each (image, class) pair
// as one NMS batch, so that nms_param.top_k (which ONNX's NMS lacks) can be a
// TopK per class before it; keep_top_k is a TopK per image across classes.
// Rows are (image, label, score, xmin, ymin, xmax, ymax) as Caffe's; without
// keep_top_k they come in Caffe's order (image, label, NMS order), with it
// by image and then by descending score.

// One node of e's lowering with one fresh output `what`; returns the output.
std::string Step(LayerExport& e, const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& what, onnx::NodeProto** node = nullptr) {
  const std::string out = e.Temp(what);
  onnx::NodeProto* made = e.graph.Node(op, e.name(), inputs, {out});
  if (node != nullptr) *node = made;
  return out;
}

std::string Reshaped(LayerExport& e, const std::string& x, const Shape& shape,
                     const std::string& what) {
  return Step(e, "Reshape", {x, e.graph.Int64Constant(e.name() + "/" + what + "_shape", shape)},
              what);
}

std::string Transposed(LayerExport& e, const std::string& x, const Shape& perm,
                       const std::string& what) {
  onnx::NodeProto* node;
  const std::string out = Step(e, "Transpose", {x}, what, &node);
  SetInts(node, "perm", perm);
  return out;
}

// x[..., begin:end] on the last axis.
std::string LastAxisSlice(LayerExport& e, const std::string& x, int64_t begin, int64_t end,
                          const std::string& what) {
  return Step(e, "Slice",
              {x, e.graph.Int64Constant(e.name() + "/begin", {begin}),
               e.graph.Int64Constant(e.name() + "/end", {end}),
               e.graph.Int64Constant(e.name() + "/axis", {-1})},
              what);
}

std::string Binary(LayerExport& e, const std::string& op, const std::string& a,
                   const std::string& b, const std::string& what) {
  return Step(e, op, {a, b}, what);
}

std::string Unsqueezed(LayerExport& e, const std::string& x, int64_t axis,
                       const std::string& what) {
  return Step(e, "Unsqueeze", {x, e.graph.Int64Constant(e.name() + "/axis", {axis})}, what);
}

std::string Gathered(LayerExport& e, const std::string& x, const std::string& indices, int64_t axis,
                     const std::string& what) {
  onnx::NodeProto* node;
  const std::string out = Step(e, "Gather", {x, indices}, what, &node);
  SetInt(node, "axis", axis);
  return out;
}

// Boxes [N, P, L, 4] decoded from the predicted offsets by code_type.
std::string DecodeBoxes(LayerExport& e, int64_t images, int64_t priors, int64_t loc_classes) {
  const DetectionOutputParameter& p = e.param.detection_output_param();
  // prior [1, 2, P * 4]: corners, then variances; each [1, P, 1, 4] here.
  const std::string both = Reshaped(e, e.bottoms[2], {2, priors, 1, 4}, "priors");
  const std::string corners = e.Temp("prior_corners"), variances = e.Temp("prior_variances");
  SetInt(e.graph.Node("Split", e.name(), {both, e.graph.Int64Constant(e.name() + "/split", {1, 1})},
                      {corners, variances}),
         "axis", 0);
  const std::string offsets = Reshaped(e, e.bottoms[0], {images, priors, loc_classes, 4}, "loc");
  const std::string moves = p.variance_encoded_in_target()
                                ? offsets
                                : Binary(e, "Mul", offsets, variances, "scaled_offsets");
  if (p.code_type() == PriorBoxParameter::CORNER) {
    return Binary(e, "Add", corners, moves, "boxes");
  }
  const std::string low = LastAxisSlice(e, corners, 0, 2, "prior_min");
  const std::string high = LastAxisSlice(e, corners, 2, 4, "prior_max");
  const std::string size = Binary(e, "Sub", high, low, "prior_size");
  if (p.code_type() == PriorBoxParameter::CORNER_SIZE) {
    onnx::NodeProto* concat;
    const std::string sizes = Step(e, "Concat", {size, size}, "prior_sizes", &concat);
    SetInt(concat, "axis", 3);
    return Binary(e, "Add", corners, Binary(e, "Mul", moves, sizes, "moves"), "boxes");
  }
  // CENTER_SIZE: the centre moves by offset * prior size, the size scales by
  // exp(offset).
  const std::string half = e.graph.ScalarConstant(e.name() + "/half", 0.5f);
  const std::string prior_center =
      Binary(e, "Mul", Binary(e, "Add", low, high, "prior_sum"), half, "prior_center");
  const std::string center =
      Binary(e, "Add",
             Binary(e, "Mul", LastAxisSlice(e, moves, 0, 2, "center_moves"), size, "center_shift"),
             prior_center, "center");
  const std::string extent =
      Binary(e, "Mul", Step(e, "Exp", {LastAxisSlice(e, moves, 2, 4, "size_moves")}, "size_factor"),
             size, "size");
  const std::string half_extent = Binary(e, "Mul", extent, half, "half_size");
  onnx::NodeProto* concat;
  const std::string boxes = Step(e, "Concat",
                                 {Binary(e, "Sub", center, half_extent, "box_min"),
                                  Binary(e, "Add", center, half_extent, "box_max")},
                                 "boxes", &concat);
  SetInt(concat, "axis", 3);
  return boxes;
}

// OpenCV's clip: every coordinate clamped to [0, 1] before NMS.
std::string ClippedIfAsked(LayerExport& e, const std::string& boxes) {
  if (!e.param.detection_output_param().clip()) return boxes;
  return Step(e, "Clip",
              {boxes, e.graph.ScalarConstant(e.name() + "/clip_min", 0),
               e.graph.ScalarConstant(e.name() + "/clip_max", 1)},
              "clipped_boxes");
}

// Caffe's overlap of an inverted box (xmax < xmin or ymax < ymin) with any
// box is 0; ONNX's NMS would sort its corners first. An all-zero box, whose
// overlap with any box is 0 in both, stands in for it in the NMS.
std::string WithoutInvertedBoxes(LayerExport& e, const std::string& boxes) {
  const std::string extent = Binary(e, "Sub", LastAxisSlice(e, boxes, 2, 4, "corner_max"),
                                    LastAxisSlice(e, boxes, 0, 2, "corner_min"), "extent");
  onnx::NodeProto* reduce;
  const std::string narrowest = Step(e, "ReduceMin", {extent}, "narrowest", &reduce);
  SetInts(reduce, "axes", {2});
  SetInt(reduce, "keepdims", 1);
  const std::string zero = e.graph.ScalarConstant(e.name() + "/zero", 0);
  const std::string inverted = Binary(e, "Less", narrowest, zero, "inverted");
  return Step(e, "Where", {inverted, zero, boxes}, "nms_input_boxes");
}

// The detections kept: per row the NMS batch (image * classes + class slot),
// its score and its box.
struct Detections {
  std::string image, label, score, box;
};

// keep_top_k: per image, the keep_top_k best scores across its classes. The
// scores of other images are -inf in each image's row of an [N, M] matrix,
// whose TopK gives each image's best; the -inf picks are dropped.
Detections KeepTopK(LayerExport& e, const Detections& all, int64_t images, int64_t keep_top_k) {
  Shape ids(images);
  for (int64_t n = 0; n < images; ++n) ids[n] = n;
  const std::string mine =
      Binary(e, "Equal", Unsqueezed(e, all.image, 0, "image_row"),
             e.graph.Int64Tensor(e.name() + "/images", {images, 1}, ids), "is_image");
  const std::string minus_inf =
      e.graph.ScalarConstant(e.name() + "/minus_inf", -std::numeric_limits<float>::infinity());
  const std::string masked =
      Step(e, "Where", {mine, Unsqueezed(e, all.score, 0, "score_row"), minus_inf}, "masked");
  const std::string count = Step(e, "Shape", {all.score}, "count");
  const std::string k =
      Binary(e, "Min", count, e.graph.Int64Constant(e.name() + "/keep_top_k", {keep_top_k}), "k");
  const std::string best = e.Temp("best_scores"), picks = e.Temp("best");
  SetInt(e.graph.Node("TopK", e.name(), {masked, k}, {best, picks}), "axis", 1);
  const std::string valid =
      Binary(e, "Greater", Reshaped(e, best, {-1}, "best_flat"), minus_inf, "valid");
  onnx::NodeProto* compress;
  const std::string chosen =
      Step(e, "Compress", {Reshaped(e, picks, {-1}, "picks_flat"), valid}, "chosen", &compress);
  SetInt(compress, "axis", 0);
  return {Gathered(e, all.image, chosen, 0, "kept_image"),
          Gathered(e, all.label, chosen, 0, "kept_label"),
          Gathered(e, all.score, chosen, 0, "kept_score"),
          Gathered(e, all.box, chosen, 0, "kept_box")};
}

// The sizes of one DetectionOutput: N images, P priors, the K' classes other
// than the background (their labels), k boxes per class into the NMS.
struct DetectionSizes {
  int64_t images, priors, slots, k;
  std::string labels;  // int64 [K'] initializer
};

// Candidates per (image, class): boxes [N, K', P, 4] and scores [N, K', P].
struct Candidates {
  std::string boxes, scores;
};

Candidates ClassCandidates(LayerExport& e, const DetectionSizes& n) {
  const DetectionOutputParameter& p = e.param.detection_output_param();
  const int64_t classes = p.num_classes();
  const int64_t loc_classes = p.share_location() ? 1 : classes;
  const std::string decoded =
      Transposed(e, ClippedIfAsked(e, DecodeBoxes(e, n.images, n.priors, loc_classes)),
                 {0, 2, 1, 3}, "class_boxes");
  const std::string boxes =
      p.share_location() ? Step(e, "Expand",
                                {decoded, e.graph.Int64Constant(e.name() + "/boxes_shape",
                                                                {n.images, n.slots, n.priors, 4})},
                                "boxes_by_class")
                         : Gathered(e, decoded, n.labels, 1, "boxes_by_class");
  const std::string conf = Reshaped(e, e.bottoms[1], {n.images, n.priors, classes}, "conf");
  return {boxes,
          Gathered(e, Transposed(e, conf, {0, 2, 1}, "class_scores"), n.labels, 1, "scores")};
}

// nms_param.top_k: the best k of each class (ties: the lower index first).
Candidates TopKPerClass(LayerExport& e, const Candidates& all, const DetectionSizes& n) {
  if (n.k == n.priors) return all;
  Candidates top{"", e.Temp("top_scores")};
  const std::string top_index = e.Temp("top_index");
  SetInt(e.graph.Node("TopK", e.name(),
                      {all.scores, e.graph.Int64Constant(e.name() + "/top_k", {n.k})},
                      {top.scores, top_index}),
         "axis", 2);
  const std::string box_index =
      Step(e, "Expand",
           {Unsqueezed(e, top_index, 3, "top_index4"),
            e.graph.Int64Constant(e.name() + "/top_shape", {n.images, n.slots, n.k, 4})},
           "box_index");
  onnx::NodeProto* gather;
  top.boxes = Step(e, "GatherElements", {all.boxes, box_index}, "top_boxes", &gather);
  SetInt(gather, "axis", 2);
  return top;
}

// NMS with each (image, class) as a batch; the kept boxes with their image,
// label and score, in Crema's order (image, label, NMS order).
Detections NmsPerClass(LayerExport& e, const Candidates& top, const DetectionSizes& n) {
  const DetectionOutputParameter& p = e.param.detection_output_param();
  const int64_t batches = n.images * n.slots;
  const std::string boxes = Reshaped(e, top.boxes, {batches, n.k, 4}, "nms_boxes");
  const float nms_threshold = p.nms_param().nms_threshold();
  const float confidence_threshold = p.confidence_threshold();
  std::vector<std::string> inputs = {
      WithoutInvertedBoxes(e, boxes), Reshaped(e, top.scores, {batches, 1, n.k}, "nms_scores"),
      e.graph.Int64Constant(e.name() + "/max_boxes", {n.k}),
      e.graph.FloatConstant(e.name() + "/nms_threshold", {1}, &nms_threshold)};
  if (p.has_confidence_threshold()) {
    inputs.push_back(
        e.graph.FloatConstant(e.name() + "/confidence_threshold", {1}, &confidence_threshold));
  }
  // selected rows: (batch, 0, index among the batch's k boxes).
  const std::string selected = Step(e, "NonMaxSuppression", inputs, "selected");
  const std::string pick =
      Gathered(e, selected, e.graph.Int64Constant(e.name() + "/batch_and_box", {0, 2}), 1, "pick");
  const std::string batch =
      Gathered(e, selected, e.graph.Int64Tensor(e.name() + "/batch_column", {}, {0}), 1, "batch");
  const std::string slot_count = e.graph.Int64Tensor(e.name() + "/slots", {}, {n.slots});
  Detections found;
  found.image = Binary(e, "Div", batch, slot_count, "image");
  const std::string slot =
      Binary(e, "Sub", batch, Binary(e, "Mul", found.image, slot_count, "first_slot"), "slot");
  found.label = Gathered(e, n.labels, slot, 0, "label");
  found.score =
      Step(e, "GatherND", {Reshaped(e, top.scores, {batches, n.k}, "flat_scores"), pick}, "score");
  found.box = Step(e, "GatherND", {boxes, pick}, "box");
  return found;
}

// Rows (image, label, score, xmin, ymin, xmax, ymax) as [1, 1, detections, 7].
void WriteDetectionRows(LayerExport& e, const Detections& found) {
  std::vector<std::string> columns;
  for (const std::string& id : {found.image, found.label}) {
    onnx::NodeProto* cast;
    const std::string as_float = Step(e, "Cast", {id}, "float_id", &cast);
    SetInt(cast, "to", onnx::TensorProto::FLOAT);
    columns.push_back(Unsqueezed(e, as_float, 1, "column"));
  }
  columns.push_back(Unsqueezed(e, found.score, 1, "column"));
  columns.push_back(found.box);
  onnx::NodeProto* concat;
  const std::string rows = Step(e, "Concat", columns, "rows", &concat);
  SetInt(concat, "axis", 1);
  e.graph.Node("Reshape", e.name(),
               {rows, e.graph.Int64Constant(e.name() + "/shape", {1, 1, -1, 7})}, {e.tops[0]});
  e.graph.SetDynamicAxis(e.tops[0], 2, "detections");
}

void ExportDetectionOutput(LayerExport& e) {
  const DetectionOutputParameter& p = e.param.detection_output_param();
  const NonMaximumSuppressionParameter& nms = p.nms_param();
  if (nms.eta() < 1 && nms.nms_threshold() > 0.5f) {
    Refuse(e,
           "eta < 1 (adaptive NMS, lowering the threshold after each kept box) has no ONNX "
           "equivalent");
  }
  Shape labels;
  for (int64_t c = 0; c < static_cast<int64_t>(p.num_classes()); ++c) {
    if (c != p.background_label_id()) labels.push_back(c);
  }
  if (labels.empty()) Refuse(e, "no class other than the background");
  DetectionSizes n;
  n.images = e.bottom_shapes[0][0];
  n.priors = e.bottom_shapes[2][2] / 4;
  n.slots = static_cast<int64_t>(labels.size());
  n.k = nms.has_top_k() && nms.top_k() < n.priors ? nms.top_k() : n.priors;
  n.labels = e.graph.Int64Constant(e.name() + "/labels", labels);
  Detections found = NmsPerClass(e, TopKPerClass(e, ClassCandidates(e, n), n), n);
  if (p.keep_top_k() != -1) found = KeepTopK(e, found, n.images, p.keep_top_k());
  WriteDetectionRows(e, found);
}

using LayerWriter = std::function<void(LayerExport&)>;

// The layer types the exporter writes, by Caffe's type string.
const std::map<std::string, LayerWriter>& LayerWriters() {
  static const std::map<std::string, LayerWriter> writers = {
      {"Convolution",
       [](LayerExport& e) { ExportConvolution(e, "Conv", e.param.convolution_param().group()); }},
      {"Deconvolution",
       [](LayerExport& e) {
         ExportConvolution(e, "ConvTranspose", e.param.convolution_param().group());
       }},
      {"ConvolutionDepthwise", ExportDepthwiseConvolution},
      {"DepthwiseConvolution", ExportDepthwiseConvolution},
      {"Pooling", ExportPooling},
      {"LRN", ExportLrn},
      {"InnerProduct", ExportInnerProduct},
      {"ReLU", ExportRelu},
      {"PReLU", ExportPrelu},
      {"ELU", ExportElu},
      {"Sigmoid", [](LayerExport& e) { e.Unary("Sigmoid"); }},
      {"TanH", [](LayerExport& e) { e.Unary("Tanh"); }},
      {"AbsVal", [](LayerExport& e) { e.Unary("Abs"); }},
      {"BNLL", [](LayerExport& e) { e.Unary("Softplus"); }},
      {"Power", ExportPower},
      {"Exp", ExportExp},
      {"Log", ExportLog},
      {"Dropout", ExportDropout},
      {"BatchNorm", ExportBatchNorm},
      {"Scale", ExportScale},
      {"Bias", ExportBias},
      {"Flatten", ExportReshape},
      {"Reshape", ExportReshape},
      {"Softmax", ExportSoftmax},
      {"Concat", ExportConcat},
      {"Slice", ExportSlice},
      {"Eltwise", ExportEltwise},
      {"ArgMax", ExportArgMax},
      {"ReLU6", ExportRelu6},
      {"Axpy", ExportAxpy},
      {"ShuffleChannel", ExportShuffleChannel},
      {"Permute", ExportPermute},
      {"Normalize", ExportNormalize},
      {"PriorBox", ExportPriorBox},
      {"DetectionOutput", ExportDetectionOutput},
      {"Interp", ExportInterp},
      {"Upsample", ExportUpsample},
      {"BN", ExportBn},
      {"ROIPooling", ExportRoiPooling},
      {"Reorg", ExportReorg},
      {"Mish", ExportMish},
  };
  return writers;
}

// Types without a faithful ONNX form, with the reason the error gives.
const std::map<std::string, std::string>& RefusedTypes() {
  static const std::map<std::string, std::string> refused = {
      {"PSROIPooling",
       "ONNX has no position-sensitive ROI pooling (MaxRoiPool takes a maximum over every "
       "channel, RoiAlign samples bilinearly; neither averages one channel per bin)"},
      {"Proposal",
       "not written: its anchors, clipping to im_info, minimum-size filter and pre- and "
       "post-NMS top-N over a data-dependent count have no ONNX form here yet"},
      {"YoloDetectionOutput",
       "not written: the YOLO forks' NMS over every class at once, on centre-size boxes, has no "
       "ONNX form here yet (ONNX's NonMaxSuppression runs per class)"},
      {"Yolov3DetectionOutput",
       "not written: the YOLO forks' NMS over every class at once, on centre-size boxes, has no "
       "ONNX form here yet (ONNX's NonMaxSuppression runs per class)"},
  };
  return refused;
}

std::string SupportedTypes() {
  std::string list = "Input, Split";
  for (const auto& entry : LayerWriters()) list += ", " + entry.first;
  return list;
}

// ---- The net ------------------------------------------------------------

void ExportInputs(const Net<float>& net, int layer_index, OnnxGraphBuilder* graph) {
  for (int id : net.top_id_vecs()[layer_index]) {
    const std::string& blob = net.blob_names()[id];
    graph->AddInput(graph->DefineInput(blob), ToShape(net.blobs()[id]->shape()));
  }
}

void ExportLayer(const Net<float>& net, int layer_index, OnnxGraphBuilder* graph) {
  Layer<float>& layer = *net.layers()[layer_index];
  const LayerParameter& param = layer.layer_param();
  LayerExport e{
      *graph, layer, param, net.bottom_vecs()[layer_index], net.top_vecs()[layer_index], {},
      {},     {},    {}};
  for (int id : net.bottom_id_vecs()[layer_index]) {
    e.bottoms.push_back(graph->Value(net.blob_names()[id]));
    e.bottom_shapes.push_back(ToShape(net.blobs()[id]->shape()));
  }
  // Split (the net's fan-out of a blob to several consumers) is no node:
  // its tops are the bottom's value.
  if (param.type() == "Split") {
    for (int id : net.top_id_vecs()[layer_index]) graph->Alias(net.blob_names()[id], e.bottoms[0]);
    return;
  }
  const auto refused = RefusedTypes().find(param.type());
  if (refused != RefusedTypes().end()) Refuse(e, refused->second);
  const auto writer = LayerWriters().find(param.type());
  if (writer == LayerWriters().end()) {
    Refuse(e, "no ONNX equivalent is written for this type (written: " + SupportedTypes() + ")");
  }
  for (int id : net.top_id_vecs()[layer_index]) {
    e.tops.push_back(graph->Define(net.blob_names()[id], param.name()));
    e.top_shapes.push_back(ToShape(net.blobs()[id]->shape()));
  }
  writer->second(e);
}

void ExportGraph(const Net<float>& net, onnx::GraphProto* graph_proto) {
  graph_proto->set_name(net.name().empty() ? "crema" : net.name());
  OnnxGraphBuilder graph(net, graph_proto);
  // The net's inputs are its Input layers' tops.
  for (size_t i = 0; i < net.layers().size(); ++i) {
    if (net.layers()[i]->layer_param().type() == "Input") {
      ExportInputs(net, static_cast<int>(i), &graph);
    } else {
      ExportLayer(net, static_cast<int>(i), &graph);
    }
  }
  for (int id : net.output_blob_indices()) {
    graph.AddOutput(graph.Value(net.blob_names()[id]), ToShape(net.blobs()[id]->shape()));
  }
}

}  // namespace

std::string NetToOnnx(const Net<float>& net, const OnnxExportOptions& options) {
  CREMA_REQUIRE(options.opset >= kOnnxMinOpset && options.opset <= kOnnxMaxOpset,
                "ONNX opset " << options.opset << " asked for; the exporter writes opsets "
                              << kOnnxMinOpset << " to " << kOnnxMaxOpset);
  CREMA_REQUIRE(net.phase() == TEST, "net '" << net.name() << "': export a TEST-phase net");
  onnx::ModelProto model;
  // IR version 7 came with opset 13 (ONNX 1.8), 8 with opset 15 (ONNX 1.10).
  model.set_ir_version(options.opset >= 15 ? 8 : 7);
  model.set_producer_name("crema");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset);
  ExportGraph(net, model.mutable_graph());
  std::string bytes;
  CREMA_REQUIRE(model.SerializeToString(&bytes),
                "net '" << net.name() << "': the ONNX model does not serialize (over 2 GB?)");
  return bytes;
}

void ExportOnnx(const std::string& model_file, const std::string& weights_file,
                const std::string& output_file, const OnnxExportOptions& options) {
  Net<float> net(model_file, TEST);
  net.CopyTrainedLayersFrom(weights_file);
  const std::string bytes = NetToOnnx(net, options);
  WriteFileAtomically(output_file, bytes);
}

}  // namespace crema

#endif  // CREMA_ONNX
