#include "crema/util/upgrade_proto.hpp"

#include <google/protobuf/descriptor.h>

#include <map>
#include <string>

#include "crema/common.hpp"
#include "crema/util/io.hpp"

namespace crema {

namespace {

const char kUpgradeToolNote[] =
    "Old formats may be dropped by a later release: rewrite this file once with "
    "upgrade_net_proto_text (prototxt), upgrade_net_proto_binary (.caffemodel) or "
    "upgrade_solver_proto_text (solver), from the build's bin/ folder.";

// How errors and logs name a layer: by name, or by position if it has none.
std::string LayerLabel(const std::string& name, int index) {
  if (!name.empty()) return "layer '" + name + "'";
  return "unnamed layer #" + std::to_string(index);
}

// ---- Step 1: V0 layers (`layers { layer { type: "conv" ... } }`) to V1 ----

bool NetNeedsV0ToV1Upgrade(const NetParameter& net) {
  for (const V1LayerParameter& entry : net.layers()) {
    if (entry.has_layer()) return true;
  }
  return false;
}

V1LayerParameter::LayerType V0TypeToV1(const std::string& type, const std::string& where) {
  static const std::map<std::string, V1LayerParameter::LayerType> kTypes = {
      {"accuracy", V1LayerParameter::ACCURACY},
      {"bnll", V1LayerParameter::BNLL},
      {"concat", V1LayerParameter::CONCAT},
      {"conv", V1LayerParameter::CONVOLUTION},
      {"data", V1LayerParameter::DATA},
      {"dropout", V1LayerParameter::DROPOUT},
      {"euclidean_loss", V1LayerParameter::EUCLIDEAN_LOSS},
      {"flatten", V1LayerParameter::FLATTEN},
      {"hdf5_data", V1LayerParameter::HDF5_DATA},
      {"hdf5_output", V1LayerParameter::HDF5_OUTPUT},
      {"im2col", V1LayerParameter::IM2COL},
      {"images", V1LayerParameter::IMAGE_DATA},
      {"infogain_loss", V1LayerParameter::INFOGAIN_LOSS},
      {"innerproduct", V1LayerParameter::INNER_PRODUCT},
      {"lrn", V1LayerParameter::LRN},
      {"multinomial_logistic_loss", V1LayerParameter::MULTINOMIAL_LOGISTIC_LOSS},
      {"pool", V1LayerParameter::POOLING},
      {"relu", V1LayerParameter::RELU},
      {"sigmoid", V1LayerParameter::SIGMOID},
      {"softmax", V1LayerParameter::SOFTMAX},
      {"softmax_loss", V1LayerParameter::SOFTMAX_LOSS},
      {"split", V1LayerParameter::SPLIT},
      {"tanh", V1LayerParameter::TANH},
      {"window_data", V1LayerParameter::WINDOW_DATA},
  };
  const auto found = kTypes.find(type);
  CREMA_REQUIRE(found != kTypes.end(), where << ": unknown V0 layer type '" << type << "'");
  return found->second;
}

// V0 nets expressed padding as a layer of its own; V1 merges it into the pad of
// the convolution or pooling layer it feeds, and that layer reads the padding
// layer's input instead.
NetParameter MergeV0PaddingLayers(const std::string& origin, const NetParameter& net) {
  NetParameter folded(net);
  folded.clear_layers();
  // The index of the layer that last wrote each blob; -1 for net inputs.
  std::map<std::string, int> last_writer;
  for (const std::string& input : net.input()) last_writer[input] = -1;
  for (int i = 0; i < net.layers_size(); ++i) {
    const V1LayerParameter& entry = net.layers(i);
    const V0LayerParameter& layer = entry.layer();
    const bool is_padding = layer.type() == "padding";
    if (!is_padding) folded.add_layers()->CopyFrom(entry);
    for (int j = 0; j < entry.bottom_size(); ++j) {
      const auto writer = last_writer.find(entry.bottom(j));
      // An unknown bottom is left for the net to report with its own context.
      if (writer == last_writer.end() || writer->second < 0) continue;
      const V1LayerParameter& source = net.layers(writer->second);
      if (source.layer().type() != "padding") continue;
      const std::string where = origin + ": " + LayerLabel(layer.name(), i);
      CREMA_REQUIRE(layer.type() == "conv" || layer.type() == "pool",
                    where << " (type '" << layer.type() << "') reads the output of padding "
                          << LayerLabel(source.layer().name(), writer->second)
                          << "; only conv and pool layers can take padding");
      CREMA_REQUIRE(entry.bottom_size() == 1,
                    where << ": a layer fed by a padding layer must have exactly one bottom");
      CREMA_REQUIRE(source.bottom_size() == 1 && source.top_size() == 1,
                    where << ": padding " << LayerLabel(source.layer().name(), writer->second)
                          << " must have exactly one bottom and one top");
      V1LayerParameter* consumer = folded.mutable_layers(folded.layers_size() - 1);
      consumer->mutable_layer()->set_pad(source.layer().pad());
      consumer->set_bottom(j, source.bottom(0));
    }
    for (const std::string& top : entry.top()) last_writer[top] = i;
  }
  return folded;
}

[[noreturn]] void RefuseV0Field(const std::string& where, const char* field) {
  CREMA_FAIL(where << ": V0 field '" << field << "' has no meaning for this layer type");
}

void UpgradeV0Layer(const std::string& origin, int index, const V1LayerParameter& entry,
                    V1LayerParameter* out) {
  const V0LayerParameter& v0 = entry.layer();
  const std::string& type = v0.type();
  const std::string where =
      origin + ": " + LayerLabel(v0.name(), index) + " (V0 type '" + type + "')";
  CREMA_REQUIRE(v0.has_type(),
                origin << ": " << LayerLabel(v0.name(), index) << ": V0 layer has no type");
  out->Clear();
  out->mutable_bottom()->CopyFrom(entry.bottom());
  out->mutable_top()->CopyFrom(entry.top());
  if (v0.has_name()) out->set_name(v0.name());
  out->set_type(V0TypeToV1(type, where));
  out->mutable_blobs()->CopyFrom(v0.blobs());
  out->mutable_blobs_lr()->CopyFrom(v0.blobs_lr());
  out->mutable_weight_decay()->CopyFrom(v0.weight_decay());

  const bool conv = type == "conv";
  const bool pool = type == "pool";
  const bool inner_product = type == "innerproduct";
  const bool lrn = type == "lrn";
  const bool data = type == "data";
  const bool images = type == "images";
  const bool window_data = type == "window_data";
  const bool hdf5_data = type == "hdf5_data";

  if (v0.has_num_output()) {
    if (conv) {
      out->mutable_convolution_param()->set_num_output(v0.num_output());
    } else if (inner_product) {
      out->mutable_inner_product_param()->set_num_output(v0.num_output());
    } else {
      RefuseV0Field(where, "num_output");
    }
  }
  if (v0.has_biasterm()) {
    if (conv) {
      out->mutable_convolution_param()->set_bias_term(v0.biasterm());
    } else if (inner_product) {
      out->mutable_inner_product_param()->set_bias_term(v0.biasterm());
    } else {
      RefuseV0Field(where, "biasterm");
    }
  }
  if (v0.has_weight_filler()) {
    if (conv) {
      out->mutable_convolution_param()->mutable_weight_filler()->CopyFrom(v0.weight_filler());
    } else if (inner_product) {
      out->mutable_inner_product_param()->mutable_weight_filler()->CopyFrom(v0.weight_filler());
    } else {
      RefuseV0Field(where, "weight_filler");
    }
  }
  if (v0.has_bias_filler()) {
    if (conv) {
      out->mutable_convolution_param()->mutable_bias_filler()->CopyFrom(v0.bias_filler());
    } else if (inner_product) {
      out->mutable_inner_product_param()->mutable_bias_filler()->CopyFrom(v0.bias_filler());
    } else {
      RefuseV0Field(where, "bias_filler");
    }
  }
  if (v0.has_pad()) {
    if (conv) {
      out->mutable_convolution_param()->add_pad(v0.pad());
    } else if (pool) {
      out->mutable_pooling_param()->set_pad(v0.pad());
    } else {
      RefuseV0Field(where, "pad");
    }
  }
  if (v0.has_kernelsize()) {
    if (conv) {
      out->mutable_convolution_param()->add_kernel_size(v0.kernelsize());
    } else if (pool) {
      out->mutable_pooling_param()->set_kernel_size(v0.kernelsize());
    } else {
      RefuseV0Field(where, "kernelsize");
    }
  }
  if (v0.has_group()) {
    if (!conv) RefuseV0Field(where, "group");
    out->mutable_convolution_param()->set_group(v0.group());
  }
  if (v0.has_stride()) {
    if (conv) {
      out->mutable_convolution_param()->add_stride(v0.stride());
    } else if (pool) {
      out->mutable_pooling_param()->set_stride(v0.stride());
    } else {
      RefuseV0Field(where, "stride");
    }
  }
  if (v0.has_pool()) {
    if (!pool) RefuseV0Field(where, "pool");
    switch (v0.pool()) {
      case V0LayerParameter::MAX:
        out->mutable_pooling_param()->set_pool(PoolingParameter::MAX);
        break;
      case V0LayerParameter::AVE:
        out->mutable_pooling_param()->set_pool(PoolingParameter::AVE);
        break;
      case V0LayerParameter::STOCHASTIC:
        out->mutable_pooling_param()->set_pool(PoolingParameter::STOCHASTIC);
        break;
    }
  }
  if (v0.has_dropout_ratio()) {
    if (type != "dropout") RefuseV0Field(where, "dropout_ratio");
    out->mutable_dropout_param()->set_dropout_ratio(v0.dropout_ratio());
  }
  if (v0.has_local_size()) {
    if (!lrn) RefuseV0Field(where, "local_size");
    out->mutable_lrn_param()->set_local_size(v0.local_size());
  }
  if (v0.has_alpha()) {
    if (!lrn) RefuseV0Field(where, "alpha");
    out->mutable_lrn_param()->set_alpha(v0.alpha());
  }
  if (v0.has_beta()) {
    if (!lrn) RefuseV0Field(where, "beta");
    out->mutable_lrn_param()->set_beta(v0.beta());
  }
  if (v0.has_k()) {
    if (!lrn) RefuseV0Field(where, "k");
    out->mutable_lrn_param()->set_k(v0.k());
  }
  if (v0.has_source()) {
    if (data) {
      out->mutable_data_param()->set_source(v0.source());
    } else if (hdf5_data) {
      out->mutable_hdf5_data_param()->set_source(v0.source());
    } else if (images) {
      out->mutable_image_data_param()->set_source(v0.source());
    } else if (window_data) {
      out->mutable_window_data_param()->set_source(v0.source());
    } else if (type == "infogain_loss") {
      out->mutable_infogain_loss_param()->set_source(v0.source());
    } else {
      RefuseV0Field(where, "source");
    }
  }
  // The data transformation moved out of the data layers' own parameters.
  if (v0.has_scale()) out->mutable_transform_param()->set_scale(v0.scale());
  if (v0.has_meanfile()) out->mutable_transform_param()->set_mean_file(v0.meanfile());
  if (v0.has_cropsize()) out->mutable_transform_param()->set_crop_size(v0.cropsize());
  if (v0.has_mirror()) out->mutable_transform_param()->set_mirror(v0.mirror());
  if (v0.has_batchsize()) {
    if (data) {
      out->mutable_data_param()->set_batch_size(v0.batchsize());
    } else if (hdf5_data) {
      out->mutable_hdf5_data_param()->set_batch_size(v0.batchsize());
    } else if (images) {
      out->mutable_image_data_param()->set_batch_size(v0.batchsize());
    } else if (window_data) {
      out->mutable_window_data_param()->set_batch_size(v0.batchsize());
    } else {
      RefuseV0Field(where, "batchsize");
    }
  }
  if (v0.has_rand_skip()) {
    if (data) {
      out->mutable_data_param()->set_rand_skip(v0.rand_skip());
    } else if (images) {
      out->mutable_image_data_param()->set_rand_skip(v0.rand_skip());
    } else {
      RefuseV0Field(where, "rand_skip");
    }
  }
  if (v0.has_shuffle_images()) {
    if (!images) RefuseV0Field(where, "shuffle_images");
    out->mutable_image_data_param()->set_shuffle(v0.shuffle_images());
  }
  if (v0.has_new_height()) {
    if (!images) RefuseV0Field(where, "new_height");
    out->mutable_image_data_param()->set_new_height(v0.new_height());
  }
  if (v0.has_new_width()) {
    if (!images) RefuseV0Field(where, "new_width");
    out->mutable_image_data_param()->set_new_width(v0.new_width());
  }
  // No V0 layer type ever read these two, and V1 has no field for them.
  if (v0.has_new_num() || v0.has_new_channels()) {
    LOG(WARNING) << where << ": V0 fields new_num/new_channels have no V1 equivalent; dropped";
  }
  if (v0.has_concat_dim()) {
    if (type != "concat") RefuseV0Field(where, "concat_dim");
    out->mutable_concat_param()->set_concat_dim(v0.concat_dim());
  }
  if (v0.has_det_fg_threshold()) {
    if (!window_data) RefuseV0Field(where, "det_fg_threshold");
    out->mutable_window_data_param()->set_fg_threshold(v0.det_fg_threshold());
  }
  if (v0.has_det_bg_threshold()) {
    if (!window_data) RefuseV0Field(where, "det_bg_threshold");
    out->mutable_window_data_param()->set_bg_threshold(v0.det_bg_threshold());
  }
  if (v0.has_det_fg_fraction()) {
    if (!window_data) RefuseV0Field(where, "det_fg_fraction");
    out->mutable_window_data_param()->set_fg_fraction(v0.det_fg_fraction());
  }
  if (v0.has_det_context_pad()) {
    if (!window_data) RefuseV0Field(where, "det_context_pad");
    out->mutable_window_data_param()->set_context_pad(v0.det_context_pad());
  }
  if (v0.has_det_crop_mode()) {
    if (!window_data) RefuseV0Field(where, "det_crop_mode");
    out->mutable_window_data_param()->set_crop_mode(v0.det_crop_mode());
  }
  if (v0.has_hdf5_output_param()) {
    if (type != "hdf5_output") RefuseV0Field(where, "hdf5_output_param");
    out->mutable_hdf5_output_param()->CopyFrom(v0.hdf5_output_param());
  }
}

void UpgradeV0Net(const std::string& origin, NetParameter* net) {
  for (int i = 0; i < net->layers_size(); ++i) {
    CREMA_REQUIRE(net->layers(i).has_layer(),
                  origin << ": " << LayerLabel(net->layers(i).name(), i)
                         << " is in V1 format while others are in V0 format; use one format");
  }
  // Net-level fields (name, input, input_dim, force_backward, ...) carry over
  // unchanged; the input fields become an Input layer in a later step.
  const NetParameter merged = MergeV0PaddingLayers(origin, *net);
  net->clear_layers();
  for (int i = 0; i < merged.layers_size(); ++i) {
    UpgradeV0Layer(origin, i, merged.layers(i), net->add_layers());
  }
}

// ---- Step 2: transformation fields of V1 data layers to transform_param ----

template <typename DataParam>
bool HasTransformFields(const DataParam& param) {
  return param.has_scale() || param.has_mean_file() || param.has_crop_size() || param.has_mirror();
}

template <typename DataParam>
void MoveTransformFields(DataParam* param, TransformationParameter* transform) {
  if (param->has_scale()) transform->set_scale(param->scale());
  if (param->has_mean_file()) transform->set_mean_file(param->mean_file());
  if (param->has_crop_size()) transform->set_crop_size(param->crop_size());
  if (param->has_mirror()) transform->set_mirror(param->mirror());
  param->clear_scale();
  param->clear_mean_file();
  param->clear_crop_size();
  param->clear_mirror();
}

bool LayerNeedsDataUpgrade(const V1LayerParameter& layer) {
  switch (layer.type()) {
    case V1LayerParameter::DATA:
      return HasTransformFields(layer.data_param());
    case V1LayerParameter::IMAGE_DATA:
      return HasTransformFields(layer.image_data_param());
    case V1LayerParameter::WINDOW_DATA:
      return HasTransformFields(layer.window_data_param());
    default:
      return false;
  }
}

bool NetNeedsDataUpgrade(const NetParameter& net) {
  for (const V1LayerParameter& layer : net.layers()) {
    if (LayerNeedsDataUpgrade(layer)) return true;
  }
  return false;
}

void UpgradeNetDataTransformation(NetParameter* net) {
  for (V1LayerParameter& layer : *net->mutable_layers()) {
    if (!LayerNeedsDataUpgrade(layer)) continue;
    TransformationParameter* transform = layer.mutable_transform_param();
    if (layer.type() == V1LayerParameter::DATA) {
      MoveTransformFields(layer.mutable_data_param(), transform);
    } else if (layer.type() == V1LayerParameter::IMAGE_DATA) {
      MoveTransformFields(layer.mutable_image_data_param(), transform);
    } else {
      MoveTransformFields(layer.mutable_window_data_param(), transform);
    }
  }
}

// ---- Step 3: V1 `layers` (enum types) to `layer` (string types) ----

bool NetNeedsV1ToV2Upgrade(const NetParameter& net) { return net.layers_size() > 0; }

// The type string of a V1 enum value; nullptr for NONE. The switch has no
// default so the compiler flags any enum value left out.
const char* V1TypeName(V1LayerParameter::LayerType type) {
  switch (type) {
    case V1LayerParameter::NONE:
      return nullptr;
    case V1LayerParameter::ABSVAL:
      return "AbsVal";
    case V1LayerParameter::ACCURACY:
      return "Accuracy";
    case V1LayerParameter::ARGMAX:
      return "ArgMax";
    case V1LayerParameter::BNLL:
      return "BNLL";
    case V1LayerParameter::CONCAT:
      return "Concat";
    case V1LayerParameter::CONTRASTIVE_LOSS:
      return "ContrastiveLoss";
    case V1LayerParameter::CONVOLUTION:
      return "Convolution";
    case V1LayerParameter::DATA:
      return "Data";
    case V1LayerParameter::DECONVOLUTION:
      return "Deconvolution";
    case V1LayerParameter::DROPOUT:
      return "Dropout";
    case V1LayerParameter::DUMMY_DATA:
      return "DummyData";
    case V1LayerParameter::EUCLIDEAN_LOSS:
      return "EuclideanLoss";
    case V1LayerParameter::ELTWISE:
      return "Eltwise";
    case V1LayerParameter::EXP:
      return "Exp";
    case V1LayerParameter::FLATTEN:
      return "Flatten";
    case V1LayerParameter::HDF5_DATA:
      return "HDF5Data";
    case V1LayerParameter::HDF5_OUTPUT:
      return "HDF5Output";
    case V1LayerParameter::HINGE_LOSS:
      return "HingeLoss";
    case V1LayerParameter::IM2COL:
      return "Im2col";
    case V1LayerParameter::IMAGE_DATA:
      return "ImageData";
    case V1LayerParameter::INFOGAIN_LOSS:
      return "InfogainLoss";
    case V1LayerParameter::INNER_PRODUCT:
      return "InnerProduct";
    case V1LayerParameter::LRN:
      return "LRN";
    case V1LayerParameter::MEMORY_DATA:
      return "MemoryData";
    case V1LayerParameter::MULTINOMIAL_LOGISTIC_LOSS:
      return "MultinomialLogisticLoss";
    case V1LayerParameter::MVN:
      return "MVN";
    case V1LayerParameter::POOLING:
      return "Pooling";
    case V1LayerParameter::POWER:
      return "Power";
    case V1LayerParameter::RELU:
      return "ReLU";
    case V1LayerParameter::SIGMOID:
      return "Sigmoid";
    case V1LayerParameter::SIGMOID_CROSS_ENTROPY_LOSS:
      return "SigmoidCrossEntropyLoss";
    case V1LayerParameter::SILENCE:
      return "Silence";
    case V1LayerParameter::SOFTMAX:
      return "Softmax";
    case V1LayerParameter::SOFTMAX_LOSS:
      return "SoftmaxWithLoss";
    case V1LayerParameter::SPLIT:
      return "Split";
    case V1LayerParameter::SLICE:
      return "Slice";
    case V1LayerParameter::TANH:
      return "TanH";
    case V1LayerParameter::WINDOW_DATA:
      return "WindowData";
    case V1LayerParameter::THRESHOLD:
      return "Threshold";
    // The forks' V1 types (SSD's, MobileNet-YOLO's).
    case V1LayerParameter::RESHAPE:
      return "Reshape";
    case V1LayerParameter::ROIPOOLING:
      return "ROIPooling";
    case V1LayerParameter::SMOOTH_L1_LOSS:
      return "SmoothL1Loss";
    case V1LayerParameter::RELU6:
      return "ReLU6";
  }
  return nullptr;
}

// Grows the layer's param specs so that spec `index` exists.
ParamSpec* ParamAt(LayerParameter* layer, int index) {
  while (layer->param_size() <= index) layer->add_param();
  return layer->mutable_param(index);
}

// Every V1 `*_param` message has a LayerParameter field of the same name and
// type; copying through the descriptors keeps the two lists from drifting.
void CopyLayerTypeParams(const V1LayerParameter& v1, LayerParameter* layer) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* v1_descriptor = v1.GetDescriptor();
  const google::protobuf::Reflection* v1_reflection = v1.GetReflection();
  const google::protobuf::Descriptor* descriptor = layer->GetDescriptor();
  const google::protobuf::Reflection* reflection = layer->GetReflection();
  const std::string suffix = "_param";
  for (int i = 0; i < v1_descriptor->field_count(); ++i) {
    const FieldDescriptor* from = v1_descriptor->field(i);
    const std::string& name = from->name();
    if (from->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || from->is_repeated() ||
        name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
        !v1_reflection->HasField(v1, from)) {
      continue;
    }
    const FieldDescriptor* to = descriptor->FindFieldByName(name);
    // Invariant of the schema: each V1 *_param has a LayerParameter field of
    // the same name and type.
    CHECK(to != nullptr && to->message_type() == from->message_type())
        << "LayerParameter lacks a field matching V1LayerParameter." << name;
    reflection->MutableMessage(layer, to)->CopyFrom(v1_reflection->GetMessage(v1, from));
  }
}

// Moves the blobs out of `v1_layer` rather than copying them.
void UpgradeV1Layer(const std::string& origin, int index, V1LayerParameter* v1_layer,
                    LayerParameter* layer) {
  const V1LayerParameter& v1 = *v1_layer;
  const std::string where = origin + ": " + LayerLabel(v1.name(), index);
  const char* type = v1.has_type() ? V1TypeName(v1.type()) : nullptr;
  CREMA_REQUIRE(type != nullptr, where << ": V1 layer has no type");
  layer->Clear();
  if (v1.has_name()) layer->set_name(v1.name());
  layer->set_type(type);
  layer->mutable_bottom()->CopyFrom(v1.bottom());
  layer->mutable_top()->CopyFrom(v1.top());
  layer->mutable_include()->CopyFrom(v1.include());
  layer->mutable_exclude()->CopyFrom(v1.exclude());
  layer->mutable_loss_weight()->CopyFrom(v1.loss_weight());
  layer->mutable_blobs()->Swap(v1_layer->mutable_blobs());
  for (int i = 0; i < v1.param_size(); ++i) ParamAt(layer, i)->set_name(v1.param(i));
  for (int i = 0; i < v1.blob_share_mode_size(); ++i) {
    ParamAt(layer, i)->set_share_mode(v1.blob_share_mode(i) == V1LayerParameter::PERMISSIVE
                                          ? ParamSpec::PERMISSIVE
                                          : ParamSpec::STRICT);
  }
  for (int i = 0; i < v1.blobs_lr_size(); ++i) ParamAt(layer, i)->set_lr_mult(v1.blobs_lr(i));
  for (int i = 0; i < v1.weight_decay_size(); ++i) {
    ParamAt(layer, i)->set_decay_mult(v1.weight_decay(i));
  }
  CopyLayerTypeParams(v1, layer);
}

void UpgradeV1Net(const std::string& origin, NetParameter* net) {
  // Everything but the layers carries over; the V1 layers are taken out, not
  // copied, since a .caffemodel's blobs can be hundreds of megabytes.
  google::protobuf::RepeatedPtrField<V1LayerParameter> v1_layers;
  v1_layers.Swap(net->mutable_layers());
  for (int i = 0; i < v1_layers.size(); ++i) {
    UpgradeV1Layer(origin, i, v1_layers.Mutable(i), net->add_layer());
  }
}

// ---- Step 4: net input fields to an Input layer ----

bool NetNeedsInputUpgrade(const NetParameter& net) {
  return net.input_size() > 0 || net.input_shape_size() > 0 || net.input_dim_size() > 0;
}

void UpgradeNetInput(const std::string& origin, NetParameter* net) {
  const bool has_shape = net->input_shape_size() > 0;
  const bool has_dim = net->input_dim_size() > 0;
  CREMA_REQUIRE(!(has_shape && has_dim),
                origin << ": the net gives both input_shape and input_dim; give one of them");
  CREMA_REQUIRE(!has_shape || net->input_shape_size() == net->input_size(),
                origin << ": " << net->input_size() << " inputs but " << net->input_shape_size()
                       << " input_shape entries; give one shape per input");
  CREMA_REQUIRE(!has_dim || net->input_dim_size() == 4 * net->input_size(),
                origin << ": " << net->input_size() << " inputs but " << net->input_dim_size()
                       << " input_dim values; give 4 per input");
  // Inputs without shapes come from old .caffemodel files, whose inputs are
  // defined by the prototxt: dropping the fields is enough there.
  if (has_shape || has_dim) {
    LayerParameter* input_layer = net->add_layer();
    input_layer->set_name("input");
    input_layer->set_type("Input");
    InputParameter* input_param = input_layer->mutable_input_param();
    for (int i = 0; i < net->input_size(); ++i) {
      input_layer->add_top(net->input(i));
      BlobShape* shape = input_param->add_shape();
      if (has_shape) {
        shape->CopyFrom(net->input_shape(i));
      } else {
        for (int d = 4 * i; d < 4 * i + 4; ++d) shape->add_dim(net->input_dim(d));
      }
    }
    // The inputs must exist before any layer reads them: move it to the front.
    for (int i = net->layer_size() - 1; i > 0; --i) net->mutable_layer()->SwapElements(i, i - 1);
  }
  net->clear_input();
  net->clear_input_shape();
  net->clear_input_dim();
}

// ---- Step 5: BatchNorm param masks ----

// Old files masked BatchNorm's three statistics blobs from the solver with
// `param { lr_mult: 0 }`; the layer now does that itself.
bool LayerNeedsBatchNormUpgrade(const LayerParameter& layer) {
  if (layer.type() != "BatchNorm" || layer.param_size() == 0) return false;
  for (const ParamSpec& spec : layer.param()) {
    // A spec that does anything but mask is the layer's to judge.
    if (spec.lr_mult() != 0 || spec.has_name()) return false;
  }
  return true;
}

bool NetNeedsBatchNormUpgrade(const NetParameter& net) {
  for (const LayerParameter& layer : net.layer()) {
    if (LayerNeedsBatchNormUpgrade(layer)) return true;
  }
  return false;
}

void UpgradeNetBatchNorm(const std::string& origin, NetParameter* net) {
  for (int i = 0; i < net->layer_size(); ++i) {
    LayerParameter* layer = net->mutable_layer(i);
    if (!LayerNeedsBatchNormUpgrade(*layer)) continue;
    LOG(INFO) << origin << ": " << LayerLabel(layer->name(), i)
              << ": removed its param specs (BatchNorm keeps its statistics out of the solver "
                 "itself)";
    layer->clear_param();
  }
}

// ---- Solver ----

const char* SolverTypeName(SolverParameter::SolverType type) {
  switch (type) {
    case SolverParameter::SGD:
      return "SGD";
    case SolverParameter::NESTEROV:
      return "Nesterov";
    case SolverParameter::ADAGRAD:
      return "AdaGrad";
    case SolverParameter::RMSPROP:
      return "RMSProp";
    case SolverParameter::ADADELTA:
      return "AdaDelta";
    case SolverParameter::ADAM:
      return "Adam";
  }
  return nullptr;
}

void UpgradeSolverType(const std::string& origin, SolverParameter* solver) {
  CREMA_REQUIRE(!solver->has_type(), origin << ": the solver gives both the deprecated "
                                               "solver_type (enum) and type (string); keep type");
  const char* type = SolverTypeName(solver->solver_type());
  CREMA_REQUIRE(type != nullptr, origin << ": unknown solver_type " << solver->solver_type());
  solver->set_type(type);
  solver->clear_solver_type();
}

}  // namespace

bool NetNeedsUpgrade(const NetParameter& net_param) {
  return NetNeedsV0ToV1Upgrade(net_param) || NetNeedsDataUpgrade(net_param) ||
         NetNeedsV1ToV2Upgrade(net_param) || NetNeedsInputUpgrade(net_param) ||
         NetNeedsBatchNormUpgrade(net_param);
}

bool UpgradeNetAsNeeded(const std::string& origin, NetParameter* net_param) {
  CREMA_REQUIRE(net_param->layer_size() == 0 || net_param->layers_size() == 0,
                origin << ": the net mixes 'layer' entries (current format, type: \"Name\") "
                          "with deprecated 'layers' entries (type: ENUM); rewrite it in the "
                          "'layer' format");
  bool changed = false;
  if (NetNeedsV0ToV1Upgrade(*net_param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated "
                 "V0LayerParameter: "
              << origin;
    UpgradeV0Net(origin, net_param);
    LOG(INFO) << "Successfully upgraded file specified using deprecated V0LayerParameter";
    changed = true;
  }
  if (NetNeedsDataUpgrade(*net_param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated transformation "
                 "parameters: "
              << origin;
    UpgradeNetDataTransformation(net_param);
    LOG(INFO) << "Successfully upgraded file specified using deprecated data transformation "
                 "parameters.";
    changed = true;
  }
  if (NetNeedsV1ToV2Upgrade(*net_param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated "
                 "V1LayerParameter: "
              << origin;
    UpgradeV1Net(origin, net_param);
    LOG(INFO) << "Successfully upgraded file specified using deprecated V1LayerParameter";
    changed = true;
  }
  if (NetNeedsInputUpgrade(*net_param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated input fields: "
              << origin;
    UpgradeNetInput(origin, net_param);
    LOG(INFO) << "Successfully upgraded file specified using deprecated input fields.";
    changed = true;
  }
  if (NetNeedsBatchNormUpgrade(*net_param)) {
    LOG(INFO) << "Attempting to upgrade batch norm layers using deprecated params: " << origin;
    UpgradeNetBatchNorm(origin, net_param);
    LOG(INFO) << "Successfully upgraded batch norm layers using deprecated params.";
    changed = true;
  }
  if (changed) LOG(INFO) << kUpgradeToolNote;
  return changed;
}

bool SolverNeedsTypeUpgrade(const SolverParameter& solver_param) {
  return solver_param.has_solver_type();
}

SolverParameter SolverTypeUpgraded(const SolverParameter& solver_param) {
  if (!SolverNeedsTypeUpgrade(solver_param)) return solver_param;
  SolverParameter upgraded(solver_param);
  UpgradeSolverType("solver", &upgraded);
  LOG(INFO) << "solver: the deprecated solver_type read as type " << upgraded.type();
  return upgraded;
}

bool UpgradeSolverAsNeeded(const std::string& origin, SolverParameter* solver_param) {
  bool changed = false;
  if (SolverNeedsTypeUpgrade(*solver_param)) {
    LOG(INFO) << "Attempting to upgrade input file specified using deprecated 'solver_type' "
                 "field (enum): "
              << origin;
    UpgradeSolverType(origin, solver_param);
    LOG(INFO) << "Successfully upgraded file specified using deprecated 'solver_type' field "
                 "(enum) to 'type' field (string).";
    LOG(INFO) << kUpgradeToolNote;
    changed = true;
  }
  if (solver_param->has_net_param()) {
    changed |= UpgradeNetAsNeeded(origin + " (net_param)", solver_param->mutable_net_param());
  }
  if (solver_param->has_train_net_param()) {
    changed |=
        UpgradeNetAsNeeded(origin + " (train_net_param)", solver_param->mutable_train_net_param());
  }
  for (int i = 0; i < solver_param->test_net_param_size(); ++i) {
    changed |= UpgradeNetAsNeeded(origin + " (test_net_param #" + std::to_string(i) + ")",
                                  solver_param->mutable_test_net_param(i));
  }
  return changed;
}

void ReadNetParamsFromTextFile(const std::string& filename, NetParameter* net_param) {
  ReadProtoFromTextFile(filename, net_param);
  UpgradeNetAsNeeded(filename, net_param);
}

void ReadNetParamsFromBinaryFile(const std::string& filename, NetParameter* net_param) {
  ReadProtoFromBinaryFile(filename, net_param);
  UpgradeNetAsNeeded(filename, net_param);
}

void ReadSolverParamsFromTextFile(const std::string& filename, SolverParameter* solver_param) {
  ReadProtoFromTextFile(filename, solver_param);
  UpgradeSolverAsNeeded(filename, solver_param);
}

}  // namespace crema
