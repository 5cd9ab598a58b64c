// Writes a trained net as an ONNX model (`crema export`). Builds with
// libonnx-dev (CREMA_ONNX); the functions below exist in every build and
// throw crema::Error where ONNX was left out.
//
// The model computes what the net's TEST-phase forward pass computes, layer
// by layer with Caffe's semantics, at the net's input shapes (ONNX shapes are
// fixed as the deploy net's are). A layer without a faithful ONNX equivalent
// (recurrent, Python, data and loss layers, ...) is an Error naming the layer
// and its type: the exporter never writes a model that computes something else.
#ifndef CREMA_EXPORT_ONNX_EXPORT_HPP_
#define CREMA_EXPORT_ONNX_EXPORT_HPP_

#include <string>

#include "crema/net.hpp"

namespace crema {

// ONNX opsets the exporter writes: 13 made Softmax act on one axis (Caffe's
// semantics) and Split take its sizes as an input; 18 changes the Reduce and
// Split signatures again, and libonnx 1.12 knows opsets up to 17.
constexpr int kOnnxMinOpset = 13;
constexpr int kOnnxMaxOpset = 17;

struct OnnxExportOptions {
  int opset = 13;
};

// The serialized ModelProto of a net built in the TEST phase, with its weights.
std::string NetToOnnx(const Net<float>& net, const OnnxExportOptions& options = {});

// Builds the deploy net (TEST phase), copies the trained weights (.caffemodel
// or .caffemodel.h5) and writes the ONNX model to output_file.
void ExportOnnx(const std::string& model_file, const std::string& weights_file,
                const std::string& output_file, const OnnxExportOptions& options = {});

}  // namespace crema

#endif  // CREMA_EXPORT_ONNX_EXPORT_HPP_
