// Classifies one image with a trained net through Crema's public C++ API, as
// Caffe's cpp_classification example does:
//
//   classification [options] DEPLOY.prototxt WEIGHTS.caffemodel LABELS.txt IMAGE
//
// IMAGE is an image file (PNG, JPEG, ...: builds of Crema with OpenCV) or,
// with --raw, a file of channels x height x width bytes (channels first) of
// the net input's size. Each pixel goes into the net as (pixel - mean) *
// scale. Prints the top-k classes, most probable first, one per line:
//   0.9731 - "Ankle boot"
// A user error (a missing file, a bad prototxt, weights of other shapes) is
// a crema::Error: its message is printed and the program exits with 1.
#include <glog/logging.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "crema/blob.hpp"
#include "crema/common.hpp"
#include "crema/net.hpp"
#ifdef CREMA_OPENCV
#include "crema/util/image_io.hpp"
#endif

namespace {

const char kUsage[] =
    "usage: classification [--raw] [--mean=M] [--scale=S] [--top_k=K]\n"
    "                      DEPLOY.prototxt WEIGHTS.caffemodel LABELS.txt IMAGE\n"
    "  --raw      IMAGE holds channels x height x width bytes (channels first)\n"
    "  --mean=M   subtracted from every pixel (default 0)\n"
    "  --scale=S  multiplies every pixel after the mean (default 1; LeNet: 0.00390625)\n"
    "  --top_k=K  classes to print (default 5)\n";

struct Options {
  bool raw = false;
  float mean = 0.f;
  float scale = 1.f;
  int top_k = 5;
  std::string deploy, weights, labels, image;
};

// A number option's value ("--scale=0.5" gives 0.5); a user error if it is not one.
double NumberOption(const std::string& arg, size_t name_length) {
  const std::string value = arg.substr(name_length);
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  CREMA_REQUIRE(!value.empty() && *end == '\0', arg << ": not a number");
  return number;
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--raw") {
      options.raw = true;
    } else if (arg.rfind("--mean=", 0) == 0) {
      options.mean = static_cast<float>(NumberOption(arg, 7));
    } else if (arg.rfind("--scale=", 0) == 0) {
      options.scale = static_cast<float>(NumberOption(arg, 8));
    } else if (arg.rfind("--top_k=", 0) == 0) {
      options.top_k = static_cast<int>(NumberOption(arg, 8));
      CREMA_REQUIRE(options.top_k > 0, "--top_k must be positive, got " << options.top_k);
    } else {
      CREMA_REQUIRE(arg.rfind("--", 0) != 0, "unknown option " << arg << "\n" << kUsage);
      positional.push_back(arg);
    }
  }
  CREMA_REQUIRE(positional.size() == 4, "expected 4 arguments, got " << positional.size() << "\n"
                                                                     << kUsage);
  options.deploy = positional[0];
  options.weights = positional[1];
  options.labels = positional[2];
  options.image = positional[3];
  return options;
}

// The class names, one per line (trailing empty lines dropped).
std::vector<std::string> ReadLabels(const std::string& filename) {
  std::ifstream file(filename);
  CREMA_REQUIRE(file, "labels " << filename << ": cannot open it");
  std::vector<std::string> labels;
  for (std::string line; std::getline(file, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  while (!labels.empty() && labels.back().empty()) labels.pop_back();
  return labels;
}

// A raw image: exactly channels x height x width bytes.
std::vector<uint8_t> ReadRawImage(const std::string& filename, size_t size) {
  std::ifstream file(filename, std::ios::binary);
  CREMA_REQUIRE(file, "image " << filename << ": cannot open it");
  std::vector<uint8_t> pixels((std::istreambuf_iterator<char>(file)),
                              std::istreambuf_iterator<char>());
  CREMA_REQUIRE(pixels.size() == size, "image " << filename << ": " << pixels.size()
                                                << " bytes, the net input takes " << size);
  return pixels;
}

// The image's pixels, channels first, at the net input's size.
std::vector<uint8_t> ReadImage(const Options& options, int channels, int height, int width) {
  const size_t size = static_cast<size_t>(channels) * height * width;
  if (options.raw) return ReadRawImage(options.image, size);
#ifdef CREMA_OPENCV
  // Grey for a one-channel input, BGR for three; resized to height x width.
  const crema::ImageColor color =
      channels == 1 ? crema::ImageColor::kGray : crema::ImageColor::kColor;
  std::vector<uint8_t> pixels(size);
  crema::ImageToPlanes(crema::ReadImageToCVMat(options.image, color, height, width), pixels.data());
  return pixels;
#else
  CREMA_FAIL("image " << options.image << ": this Crema was built without OpenCV and reads "
                      << "only --raw images");
#endif
}

// Prints the top_k classes of the probabilities, most probable first.
void PrintTopClasses(const float* probabilities, const std::vector<std::string>& labels,
                     int top_k) {
  std::vector<int> order(labels.size());
  std::iota(order.begin(), order.end(), 0);
  const int k = std::min(top_k, static_cast<int>(order.size()));
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [probabilities](int a, int b) { return probabilities[a] > probabilities[b]; });
  std::cout << std::fixed << std::setprecision(4);
  for (int i = 0; i < k; ++i) {
    std::cout << probabilities[order[i]] << " - \"" << labels[order[i]] << "\"\n";
  }
}

void Classify(const Options& options) {
  crema::Net<float> net(options.deploy, crema::TEST);
  net.CopyTrainedLayersFrom(options.weights);
  const std::vector<std::string> labels = ReadLabels(options.labels);
  CREMA_REQUIRE(net.num_inputs() == 1 && net.input_blobs()[0]->num_axes() == 4,
                options.deploy << ": a deploy net with one N x C x H x W input is needed");
  crema::Blob<float>* input = net.input_blobs()[0];
  const int channels = input->shape(1), height = input->shape(2), width = input->shape(3);
  input->Reshape(1, channels, height, width);
  net.Reshape();

  const std::vector<uint8_t> pixels = ReadImage(options, channels, height, width);
  float* data = input->mutable_cpu_data();
  for (size_t i = 0; i < pixels.size(); ++i) {
    data[i] = (pixels[i] - options.mean) * options.scale;
  }
  net.Forward();

  const crema::Blob<float>& output = *net.output_blobs().back();
  CREMA_REQUIRE(output.count() == static_cast<int>(labels.size()),
                "labels " << options.labels << ": " << labels.size()
                          << " labels, the net's output has " << output.count() << " classes");
  PrintTopClasses(output.cpu_data(), labels, options.top_k);
}

}  // namespace

int main(int argc, char** argv) {
  // Crema logs what it builds at INFO; this program prints only its result
  // and the warnings and errors.
  FLAGS_minloglevel = google::GLOG_WARNING;
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  try {
    Classify(ParseOptions(argc, argv));
  } catch (const crema::Error& error) {
    std::cerr << "classification: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
