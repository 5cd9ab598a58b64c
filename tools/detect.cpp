// `crema detect`: the detections of an SSD-style deploy net for each of a
// list of images, prepared as the SSD fork's deploy scripts prepare them: read
// as BGR (grey for a one-channel input), resized to the input's height x width
// (plain bilinear resize, no crop or padding), the per-channel --mean_value
// subtracted, then scaled by --scale. The net's last output must be a
// DetectionOutput top: [1, 1, N, 7], rows (image, label, score, xmin, ymin,
// xmax, ymax) in [0, 1] image coordinates, label -1 for "nothing kept".
#include "detect.hpp"

#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "crema/common.hpp"
#include "image_list.hpp"
#include "split_list.hpp"

#ifdef CREMA_OPENCV
#include <filesystem>
#include <opencv2/core/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "crema/blob.hpp"
#include "crema/data_transformer.hpp"
#include "crema/net.hpp"
#include "crema/util/image_io.hpp"
#include "crema/util/io.hpp"
#endif

DECLARE_string(model);
DECLARE_string(weights);
DECLARE_string(images);
DECLARE_double(scale);
DEFINE_double(threshold, 0.5, "detect: the lowest score a printed detection has, in [0, 1]");
DEFINE_string(labelmap, "",
              "detect: the SSD label map (a LabelMap prototxt of item { name label "
              "display_name }) that names the labels; without it a label's name is its number");
DEFINE_string(mean_value, "",
              "detect: the mean to subtract from each pixel before --scale, one value or one "
              "per input channel in BGR order (SSD's VGG nets: 104,117,123; MobileNet-SSD: "
              "127.5); none by default");
DEFINE_string(output_dir, "",
              "detect: a folder (created if missing) to write each image into as PNG with "
              "its boxes drawn, as <name less extension>.png");

#ifdef CREMA_OPENCV
namespace {

// One detection, its box in the pixels of the image as read.
struct Detection {
  int label;
  float score;
  float box[4];  // xmin, ymin, xmax, ymax
};

void RequireFlags() {
  CREMA_REQUIRE(!FLAGS_model.empty(), "detect: give the deploy net with --model=NET.prototxt");
  CREMA_REQUIRE(!FLAGS_weights.empty(), "detect: give the trained weights with --weights=W");
  CREMA_REQUIRE(std::isfinite(FLAGS_threshold) && FLAGS_threshold >= 0 && FLAGS_threshold <= 1,
                "--threshold must be in [0, 1], got " << FLAGS_threshold);
  CREMA_REQUIRE(std::isfinite(FLAGS_scale) && FLAGS_scale > 0,
                "--scale must be a positive number, got " << FLAGS_scale);
}

// The image files, each checked to exist before the net is built.
std::vector<std::string> ExistingImageFiles() {
  const std::vector<std::string> files = crema::ImageFiles(FLAGS_images, "detect");
  for (const std::string& file : files) {
    CREMA_REQUIRE(crema::FileExists(file), "--images: " << file << ": no such image file");
  }
  return files;
}

// Label -> name from --labelmap: an item's display_name, else its name.
std::map<int, std::string> LabelNames() {
  std::map<int, std::string> names;
  if (FLAGS_labelmap.empty()) return names;
  crema::LabelMap map;
  try {
    crema::ReadProtoFromTextFile(FLAGS_labelmap, &map);
  } catch (const crema::Error& e) {
    CREMA_FAIL("--labelmap: " << e.what());
  }
  CREMA_REQUIRE(map.item_size() > 0, "--labelmap " << FLAGS_labelmap << ": no item");
  for (const crema::LabelMapItem& item : map.item()) {
    const std::string& name = item.display_name().empty() ? item.name() : item.display_name();
    CREMA_REQUIRE(
        names.emplace(item.label(), name).second,
        "--labelmap " << FLAGS_labelmap << ": label " << item.label() << " has two items");
  }
  return names;
}

std::string LabelName(int label, const std::map<int, std::string>& names) {
  if (FLAGS_labelmap.empty()) return std::to_string(label);
  const auto found = names.find(label);
  CREMA_REQUIRE(found != names.end(), "--labelmap " << FLAGS_labelmap << ": no item for label "
                                                    << label << ", which the net detected");
  return found->second;
}

// How the net input is made from an image (DataTransformer, as a data
// layer's transform_param): less --mean_value, one value per
// input channel (none without it), then times --scale.
crema::TransformationParameter InputTransform(int channels) {
  crema::TransformationParameter transform;
  transform.set_scale(static_cast<float>(FLAGS_scale));
  if (FLAGS_mean_value.empty()) return transform;
  std::vector<float> values;
  for (const std::string& item : crema::SplitList(FLAGS_mean_value)) {
    size_t used = 0;
    float value = NAN;
    try {
      value = std::stof(item, &used);
    } catch (...) {
    }
    CREMA_REQUIRE(used == item.size() && std::isfinite(value),
                  "--mean_value: '" << item << "' is not a number");
    values.push_back(value);
  }
  CREMA_REQUIRE(values.size() == 1 || static_cast<int>(values.size()) == channels,
                "--mean_value: " << values.size() << " values; give 1 or " << channels
                                 << " (the net input's channels)");
  for (int c = 0; c < channels; ++c) {
    transform.add_mean_value(values.size() == 1 ? values[0] : values[c]);
  }
  return transform;
}

// The deploy net's one input, reshaped to one image of 1 or 3 channels.
crema::Blob<float>* SingleImageInput(crema::Net<float>* net) {
  CREMA_REQUIRE(net->num_inputs() == 1,
                "detect: " << FLAGS_model << " has " << net->num_inputs()
                           << " inputs; a deploy net with one Input layer top is needed");
  crema::Blob<float>* input = net->input_blobs()[0];
  CREMA_REQUIRE(input->num_axes() == 4 && (input->shape(1) == 1 || input->shape(1) == 3),
                "detect: the net input " << input->shape_string()
                                         << " is not N x 1 or 3 channels x height x width");
  input->Reshape(1, input->shape(1), input->shape(2), input->shape(3));
  net->Reshape();
  return input;
}

// The net's last output, which must have a DetectionOutput top's shape.
const crema::Blob<float>& DetectionBlob(const crema::Net<float>& net) {
  CREMA_REQUIRE(net.num_outputs() > 0, "detect: " << FLAGS_model << " has no output");
  const crema::Blob<float>& output = *net.output_blobs().back();
  CREMA_REQUIRE(output.num_axes() == 4 && output.shape(0) == 1 && output.shape(1) == 1 &&
                    output.shape(3) == 7,
                "detect: " << FLAGS_model << ": the last output '"
                           << net.blob_names()[net.output_blob_indices().back()] << "' is "
                           << output.shape_string()
                           << ", not 1 x 1 x N x 7 (a DetectionOutput layer's top)");
  return output;
}

// The image as the net takes it: its channels, resized to height x width.
cv::Mat NetImage(const cv::Mat& image, int channels, int height, int width) {
  cv::Mat converted = image;
  if (channels == 1) cv::cvtColor(image, converted, cv::COLOR_BGR2GRAY);
  cv::Mat resized;
  cv::resize(converted, resized, cv::Size(width, height), 0, 0, cv::INTER_LINEAR);
  return resized;
}

// The output's rows of a label (not -1) scoring at least --threshold, boxes
// scaled to width x height pixels and clipped to the image.
std::vector<Detection> KeptDetections(const crema::Blob<float>& output, int width, int height) {
  std::vector<Detection> detections;
  const float* row = output.cpu_data();
  for (int i = 0; i < output.shape(2); ++i, row += 7) {
    if (row[1] < 0 || row[2] < FLAGS_threshold) continue;
    Detection detection{static_cast<int>(row[1]), row[2], {}};
    const float size[4] = {static_cast<float>(width), static_cast<float>(height),
                           static_cast<float>(width), static_cast<float>(height)};
    for (int k = 0; k < 4; ++k) {
      detection.box[k] = std::min(std::max(row[3 + k], 0.f), 1.f) * size[k];
    }
    detections.push_back(detection);
  }
  return detections;
}

// `text` as a JSON string literal.
std::string JsonString(const std::string& text) {
  std::string quoted = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += static_cast<char>(c);
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      quoted += escaped;
    } else {
      quoted += static_cast<char>(c);
    }
  }
  return quoted + "\"";
}

std::string JsonLine(const std::string& file, const Detection& detection, const std::string& name) {
  char numbers[160];
  std::snprintf(numbers, sizeof(numbers), "\"score\": %.4f, \"box\": [%.1f, %.1f, %.1f, %.1f]}",
                detection.score, detection.box[0], detection.box[1], detection.box[2],
                detection.box[3]);
  return "{\"image\": " + JsonString(file) + ", \"label\": " + std::to_string(detection.label) +
         ", \"name\": " + JsonString(name) + ", " + numbers;
}

// A colour per label, the same in every image.
cv::Scalar LabelColour(int label) {
  static const cv::Scalar palette[] = {{56, 56, 255},  {151, 157, 255}, {31, 112, 255},
                                       {29, 178, 255}, {49, 210, 207},  {10, 249, 72},
                                       {23, 204, 146}, {134, 219, 61},  {211, 188, 0},
                                       {255, 149, 0},  {255, 55, 0},    {199, 55, 255}};
  return palette[label % (sizeof(palette) / sizeof(palette[0]))];
}

// Draws each box with "name score" on a filled strip above it.
void DrawDetections(const std::vector<Detection>& detections,
                    const std::map<int, std::string>& names, cv::Mat* image) {
  for (const Detection& detection : detections) {
    const cv::Point top_left(cvRound(detection.box[0]), cvRound(detection.box[1]));
    const cv::Point bottom_right(cvRound(detection.box[2]), cvRound(detection.box[3]));
    const cv::Scalar colour = LabelColour(detection.label);
    cv::rectangle(*image, top_left, bottom_right, colour, 2);
    char score[16];
    std::snprintf(score, sizeof(score), " %.2f", detection.score);
    const std::string text = LabelName(detection.label, names) + score;
    int baseline = 0;
    const cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, 0.45, 1, &baseline);
    const cv::Point origin(top_left.x, std::max(top_left.y, size.height + baseline));
    cv::rectangle(*image, origin + cv::Point(0, baseline),
                  origin + cv::Point(size.width, -size.height - baseline), colour, cv::FILLED);
    cv::putText(*image, text, origin, cv::FONT_HERSHEY_SIMPLEX, 0.45, cv::Scalar(0, 0, 0), 1,
                cv::LINE_AA);
  }
}

// Each image's drawing under --output_dir (empty names without it); two
// images whose drawings would share a name are refused before any work.
std::vector<std::string> DrawingPaths(const std::vector<std::string>& files) {
  std::vector<std::string> paths(files.size());
  if (FLAGS_output_dir.empty()) return paths;
  std::error_code error;
  std::filesystem::create_directories(FLAGS_output_dir, error);
  CREMA_REQUIRE(!error && std::filesystem::is_directory(FLAGS_output_dir),
                "--output_dir " << FLAGS_output_dir << ": cannot create the folder ("
                                << (error ? error.message() : "not a folder") << ")");
  std::set<std::string> taken;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string name = std::filesystem::path(files[i]).stem().string() + ".png";
    CREMA_REQUIRE(taken.insert(name).second, "--output_dir: two images would both be written as "
                                                 << name << " (" << files[i] << ")");
    paths[i] = (std::filesystem::path(FLAGS_output_dir) / name).string();
  }
  return paths;
}

// Encodes as PNG and writes through a temporary file renamed into place, so
// a failure leaves no half-written drawing.
void WritePng(const cv::Mat& image, const std::string& path) {
  std::vector<unsigned char> bytes;
  CREMA_REQUIRE(cv::imencode(".png", image, bytes), path << ": OpenCV cannot encode it as PNG");
  crema::WriteFileAtomically(path, std::string(bytes.begin(), bytes.end()));
}

}  // namespace

int Detect() {
  RequireFlags();
  const std::vector<std::string> files = ExistingImageFiles();
  const std::map<int, std::string> names = LabelNames();
  const std::vector<std::string> drawings = DrawingPaths(files);
  crema::Net<float> net(FLAGS_model, crema::TEST);
  for (const std::string& file : crema::SplitList(FLAGS_weights)) net.CopyTrainedLayersFrom(file);
  crema::Blob<float>* input = SingleImageInput(&net);
  DetectionBlob(net);
  const int channels = input->shape(1), height = input->shape(2), width = input->shape(3);
  crema::DataTransformer<float> transformer(InputTransform(channels), crema::TEST);
  for (size_t i = 0; i < files.size(); ++i) {
    cv::Mat image = crema::ReadImageToCVMat(files[i], crema::ImageColor::kColor);
    transformer.Transform(NetImage(image, channels, height, width), input->mutable_cpu_data());
    net.Forward();
    const std::vector<Detection> detections =
        KeptDetections(DetectionBlob(net), image.cols, image.rows);
    for (const Detection& detection : detections) {
      std::cout << JsonLine(files[i], detection, LabelName(detection.label, names)) << "\n";
    }
    std::cout.flush();
    if (drawings[i].empty()) continue;
    DrawDetections(detections, names, &image);
    WritePng(image, drawings[i]);
  }
  return 0;
}

#else  // !CREMA_OPENCV

int Detect() {
  CREMA_FAIL(
      "detect reads images with OpenCV: this crema was built without it "
      "(configure with -DCREMA_OPENCV=ON)");
  return 1;
}

#endif  // CREMA_OPENCV
