// `crema classify`: a deploy net's top classes for each of a list of images,
// prepared as Caffe's cpp_classification example prepares them: read grey or
// colour as the net's input has 1 or 3 channels, resized to the input's
// height x width, the mean subtracted, then scaled by --scale (the
// transform_param scale the net was trained with).
#include "classify.hpp"

#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "crema/common.hpp"
#include "image_list.hpp"
#include "split_list.hpp"

#ifdef CREMA_OPENCV
#include <opencv2/core/core.hpp>

#include "crema/blob.hpp"
#include "crema/data_transformer.hpp"
#include "crema/net.hpp"
#include "crema/util/image_io.hpp"
#include "crema/util/io.hpp"
#endif

DECLARE_string(model);
DECLARE_string(weights);
DEFINE_string(images, "",
              "classify, detect: the images, as a comma-separated list of files or one .txt file "
              "listing them, one per line (a trailing ' <label>', as in Caffe's image lists, "
              "is ignored)");
DEFINE_string(labels, "",
              "classify, test: a text file of class names, one per line, in class order; "
              "without it classes print as indices (test: prints per-class accuracy, top-k "
              "and the confusion matrix)");
DEFINE_string(mean_file, "",
              "classify: a .binaryproto mean image to subtract (its per-channel means when its "
              "size differs from the net input's)");
DEFINE_double(scale, 1.0,
              "classify, detect: the transform_param scale the net was trained with (LeNet: "
              "0.00390625; MobileNet-SSD: 0.007843), applied after the mean is subtracted");
DEFINE_int32(top_k, 5,
             "classify: how many classes to print per image; test --labels: the k of top-k "
             "accuracy");

#ifdef CREMA_OPENCV
namespace {

// The class names: --labels' lines, or the indices 0..classes-1.
std::vector<std::string> ClassNames(int classes) {
  std::vector<std::string> names;
  if (FLAGS_labels.empty()) {
    for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
    return names;
  }
  names = crema::ReadLines(FLAGS_labels, "--labels");
  while (!names.empty() && names.back().empty()) names.pop_back();
  CREMA_REQUIRE(static_cast<int>(names.size()) == classes,
                "--labels " << FLAGS_labels << ": " << names.size()
                            << " labels, but the net's output has " << classes << " classes");
  return names;
}

// How the net input is made from an image (DataTransformer, as a data
// layer's transform_param): less the --mean_file where it has
// the input's size, or each of its channels' mean where not (as
// cpp_classification does), then times --scale.
crema::TransformationParameter InputTransform(int channels, int height, int width) {
  crema::TransformationParameter transform;
  transform.set_scale(static_cast<float>(FLAGS_scale));
  if (FLAGS_mean_file.empty()) return transform;
  crema::BlobProto proto;
  crema::ReadProtoFromBinaryFile(FLAGS_mean_file, &proto);
  crema::Blob<float> blob;
  try {
    blob.FromProto(proto);
  } catch (const crema::Error& e) {
    CREMA_FAIL("--mean_file " << FLAGS_mean_file << ": " << e.what());
  }
  CREMA_REQUIRE(blob.num_axes() == 4 && blob.shape(0) == 1 && blob.shape(1) == channels,
                "--mean_file " << FLAGS_mean_file << ": a mean of shape " << blob.shape_string()
                               << ", the net input has " << channels << " channel(s)");
  if (blob.shape(2) == height && blob.shape(3) == width) {
    transform.set_mean_file(FLAGS_mean_file);
    return transform;
  }
  const float* data = blob.cpu_data();
  const int plane = blob.shape(2) * blob.shape(3);
  for (int c = 0; c < channels; ++c) {
    const double sum = std::accumulate(data + c * plane, data + (c + 1) * plane, 0.0);
    transform.add_mean_value(static_cast<float>(sum / plane));
  }
  return transform;
}

// "<label> <prob>, ..." of the top_k classes, most probable first.
std::string TopClasses(const crema::Blob<float>& output, const std::vector<std::string>& names) {
  const float* scores = output.cpu_data();
  std::vector<int> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  const int k = std::min<int>(FLAGS_top_k, static_cast<int>(order.size()));
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [scores](int a, int b) { return scores[a] > scores[b]; });
  std::ostringstream line;
  line << std::fixed << std::setprecision(4);
  for (int i = 0; i < k; ++i) {
    line << (i ? ", " : "") << names[order[i]] << " " << scores[order[i]];
  }
  return line.str();
}

}  // namespace

int Classify() {
  CREMA_REQUIRE(!FLAGS_model.empty(), "classify: give the deploy net with --model=NET.prototxt");
  CREMA_REQUIRE(!FLAGS_weights.empty(), "classify: give the trained weights with --weights=W");
  CREMA_REQUIRE(FLAGS_top_k > 0, "--top_k must be positive, got " << FLAGS_top_k);
  // As the float the input is multiplied by: 1e39 would be infinite.
  const float scale = static_cast<float>(FLAGS_scale);
  CREMA_REQUIRE(std::isfinite(scale) && scale > 0,
                "--scale must be a positive finite number, got " << FLAGS_scale);
  const std::vector<std::string> files = crema::ImageFiles(FLAGS_images, "classify");
  crema::Net<float> net(FLAGS_model, crema::TEST);
  for (const std::string& file : crema::SplitList(FLAGS_weights)) net.CopyTrainedLayersFrom(file);
  CREMA_REQUIRE(net.num_inputs() == 1,
                "classify: " << FLAGS_model << " has " << net.num_inputs()
                             << " inputs; a deploy net with one Input layer top is needed");
  crema::Blob<float>* input = net.input_blobs()[0];
  CREMA_REQUIRE(input->num_axes() == 4 && (input->shape(1) == 1 || input->shape(1) == 3),
                "classify: the net input " << input->shape_string()
                                           << " is not N x 1 or 3 channels x height x width");
  const int channels = input->shape(1), height = input->shape(2), width = input->shape(3);
  input->Reshape(1, channels, height, width);
  net.Reshape();
  CREMA_REQUIRE(net.num_outputs() > 0, "classify: " << FLAGS_model << " has no output");
  const crema::Blob<float>& output = *net.output_blobs().back();
  const std::vector<std::string> names = ClassNames(output.count());
  crema::DataTransformer<float> transformer(InputTransform(channels, height, width), crema::TEST);
  const crema::ImageColor color =
      channels == 1 ? crema::ImageColor::kGray : crema::ImageColor::kColor;
  for (const std::string& file : files) {
    transformer.Transform(crema::ReadImageToCVMat(file, color, height, width),
                          input->mutable_cpu_data());
    net.Forward();
    std::cout << file << ": " << TopClasses(output, names) << std::endl;
  }
  return 0;
}

#else  // !CREMA_OPENCV

int Classify() {
  CREMA_FAIL(
      "classify reads images with OpenCV: this crema was built without it "
      "(configure with -DCREMA_OPENCV=ON)");
  return 1;
}

#endif  // CREMA_OPENCV
