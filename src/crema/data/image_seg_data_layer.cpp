#include "crema/data/image_seg_data_layer.hpp"

#ifdef CREMA_OPENCV

#include <algorithm>
#include <cmath>
#include <fstream>
#include <opencv2/imgproc/imgproc.hpp>

#include "crema/data/converters/convert_imageset.hpp"
#include "crema/images/image_header.hpp"
#include "crema/util/image_io.hpp"

namespace crema {

namespace {

// A one-column list (label_type NONE): each non-blank line, without its
// trailing blanks, is an image path.
std::vector<ImageListEntry> ReadSegImagePaths(const std::string& list_file) {
  std::ifstream file(list_file);
  CREMA_REQUIRE(file.good(), list_file << ": cannot open the image list");
  std::vector<ImageListEntry> entries;
  std::string text;
  for (int line = 1; std::getline(file, text); ++line) {
    const size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) continue;
    ImageListEntry entry;
    entry.path = text.substr(0, end + 1);
    entry.line = line;
    entries.push_back(entry);
  }
  CREMA_REQUIRE(!file.bad(), list_file << ": read error");
  return entries;
}

}  // namespace

template <typename Dtype>
ImageSegDataLayer<Dtype>::ImageSegDataLayer(const LayerParameter& param)
    : BasePrefetchingDataLayer<Dtype>(param), own_(param.transform_param()) {
  TransformationParameter& shared = this->transform_param_;
  shared.clear_crop_size();
  shared.clear_crop_height();
  shared.clear_crop_width();
  shared.clear_mirror();
  shared.clear_scale_factors();
  shared.clear_mean_value();
  shared.clear_scale();
  shared.clear_mean_file();  // refused in CheckSettings, as the fork refuses it
}

template <typename Dtype>
ImageSegDataLayer<Dtype>::~ImageSegDataLayer() {
  // The prefetch thread reads lines_: stop it first.
  this->StopInternalThread();
}

template <typename Dtype>
void ImageSegDataLayer<Dtype>::CheckSettings() const {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  CREMA_LAYER_REQUIRE(param.batch_size() > 0 && param.batch_size() <= INT32_MAX,
                      "image_data_param.batch_size must be positive");
  CREMA_LAYER_REQUIRE((param.new_height() == 0) == (param.new_width() == 0),
                      "give both new_height and new_width, or neither");
  CREMA_LAYER_REQUIRE(param.ignore_label() >= 0 && param.ignore_label() <= 255,
                      "image_data_param.ignore_label "
                          << param.ignore_label() << " does not fit the 8-bit labels (0..255)");
  CREMA_LAYER_REQUIRE(param.label_type() != ImageDataParameter::BBX,
                      "image_data_param.label_type BBX (Xilinx's) is not a segmentation label");
  CREMA_LAYER_REQUIRE(!own_.has_mean_file(),
                      "transform_param.mean_file is not read by ImageSegData (as in DeepLab); "
                      "give mean_value");
  CREMA_LAYER_REQUIRE(own_.has_crop_height() == own_.has_crop_width() &&
                          !(own_.has_crop_size() && own_.has_crop_height()),
                      "give crop_size, or crop_height and crop_width together (as DeepLab asks)");
  for (float factor : own_.scale_factors()) {
    CREMA_LAYER_REQUIRE(std::isfinite(factor) && factor > 0,
                        "transform_param.scale_factors: " << factor << " is not a positive scale");
  }
  CREMA_LAYER_REQUIRE(!this->data_transformer_->draws_random_numbers(),
                      "transform_param's random augmentations would move the image and not "
                      "its labels");
}

template <typename Dtype>
void ImageSegDataLayer<Dtype>::ReadList() {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  std::vector<ImageListEntry> entries;
  try {
    switch (param.label_type()) {
      case ImageDataParameter::PIXEL:
        entries = ReadAnnotatedList(param.source());  // `image label_image` lines
        break;
      case ImageDataParameter::IMAGE:
        entries = ReadImageList(param.source());  // `image class` lines
        break;
      default:
        entries = ReadSegImagePaths(param.source());
    }
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (ImageSegData): " << e.what());
  }
  CREMA_LAYER_REQUIRE(!entries.empty(), "the list file " << param.source() << " names no images");
  for (const ImageListEntry& entry : entries) {
    CREMA_LAYER_REQUIRE(
        param.label_type() != ImageDataParameter::IMAGE || (entry.label >= 0 && entry.label <= 255),
        param.source() << ":" << entry.line << ": the class " << entry.label
                       << " does not fit the 8-bit labels (0..255)");
    const std::string labels =
        entry.annotation.empty() ? "" : param.root_folder() + entry.annotation;
    lines_.push_back({param.root_folder() + entry.path, labels, entry.label, entry.line});
  }
}

template <typename Dtype>
void ImageSegDataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                              const std::vector<Blob<Dtype>*>& top) {
  CheckSettings();
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  ReadList();
  seed_ = DrawSeed();
  uint64_t skip = 0;
  if (param.rand_skip()) {
    skip = Context::rng()() % param.rand_skip() % lines_.size();
    LOG(INFO) << "Skipping first " << skip << " images.";
  }
  walk_ = PassWalk(lines_.size(), param.shuffle(), seed_, skip);
  crop_height_ = static_cast<int>(own_.has_crop_height() ? own_.crop_height() : own_.crop_size());
  crop_width_ = static_cast<int>(own_.has_crop_width() ? own_.crop_width() : own_.crop_size());
  // The first image gives the channels, and the size when nothing is cropped.
  const Pair first = LoadPair(lines_[walk_.current()]);
  const int channels = first.image.channels();
  CREMA_LAYER_REQUIRE(own_.mean_value_size() <= 1 || own_.mean_value_size() == channels,
                      "give one mean_value or one per channel (" << channels << "), not "
                                                                 << own_.mean_value_size());
  mean_.assign(channels, Dtype(0));
  for (int c = 0; c < channels && own_.mean_value_size() > 0; ++c) {
    mean_[c] = static_cast<Dtype>(own_.mean_value(own_.mean_value_size() == 1 ? 0 : c));
  }
  const int batch_size = static_cast<int>(param.batch_size());
  const int height = crop_height_ > 0 ? crop_height_ : first.image.rows;
  const int width = crop_width_ > 0 ? crop_width_ : first.image.cols;
  const std::vector<int> data_shape{batch_size, channels, height, width};
  const std::vector<int> label_shape{batch_size, 1, height, width};
  const std::vector<int> dim_shape{batch_size, 1, 1, 2};
  const std::vector<std::vector<int>> shapes{data_shape, label_shape, dim_shape};
  for (size_t i = 0; i < top.size(); ++i) top[i]->Reshape(shapes[i]);
  for (auto& batch : this->prefetch_) {
    const std::vector<Blob<Dtype>*> served = batch->Served(top.size());
    for (size_t i = 0; i < served.size(); ++i) served[i]->Reshape(shapes[i]);
  }
  LOG_IF(INFO, Context::is_rank_zero())
      << "output data size: " << batch_size << "," << channels << "," << height << "," << width
      << " (" << lines_.size() << " images)";
}

template <typename Dtype>
typename ImageSegDataLayer<Dtype>::Pair ImageSegDataLayer<Dtype>::LoadPair(const Line& line) const {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  const int height = static_cast<int>(param.new_height());
  const int width = static_cast<int>(param.new_width());
  Pair pair;
  try {
    pair.image = ReadImageToCVMat(
        line.image, param.is_color() ? ImageColor::kColor : ImageColor::kGray, height, width);
    if (param.label_type() == ImageDataParameter::PIXEL) {
      pair.labels = ReadLabelImageToCVMat(line.labels, height, width);
    } else {
      const int label =
          param.label_type() == ImageDataParameter::IMAGE ? line.label : param.ignore_label();
      pair.labels = cv::Mat(pair.image.rows, pair.image.cols, CV_8UC1, cv::Scalar(label));
    }
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (ImageSegData): " << param.source()
                         << ":" << line.number << ": " << e.what());
  }
  CREMA_LAYER_REQUIRE(pair.labels.rows == pair.image.rows && pair.labels.cols == pair.image.cols,
                      param.source()
                          << ":" << line.number << ": the image is " << pair.image.cols << "x"
                          << pair.image.rows << ", its labels " << pair.labels.cols << "x"
                          << pair.labels.rows << "; they must match pixel for pixel");
  return pair;
}

template <typename Dtype>
void ImageSegDataLayer<Dtype>::FillItem(const Line& line, Pair pair, RNG* rng,
                                        const std::vector<int>& shape, Dtype* data,
                                        Dtype* labels) const {
  const std::string& source = this->layer_param_.image_data_param().source();
  const bool mirror = own_.mirror() && (*rng)() % 2;
  if (own_.scale_factors_size() > 0) {
    const float factor = own_.scale_factors((*rng)() % own_.scale_factors_size());
    if (factor != 1) {
      const double rows = std::floor(static_cast<float>(pair.image.rows) * factor);
      const double cols = std::floor(static_cast<float>(pair.image.cols) * factor);
      CREMA_LAYER_REQUIRE(rows >= 1 && cols >= 1 && rows * cols <= double(MaxImagePixels()),
                          source << ":" << line.number << ": the scale " << factor << " makes the "
                                 << pair.image.cols << "x" << pair.image.rows << " image " << cols
                                 << "x" << rows << ", outside 1 .. " << MaxImagePixels()
                                 << " pixels");
      const cv::Size size(static_cast<int>(cols), static_cast<int>(rows));
      cv::Mat image, labels;
      cv::resize(pair.image, image, size, 0, 0, cv::INTER_LINEAR);
      cv::resize(pair.labels, labels, size, 0, 0, cv::INTER_NEAREST);
      pair = {image, labels};
    }
  }
  const int channels = shape[1], height = shape[2], width = shape[3];
  CREMA_LAYER_REQUIRE(crop_height_ > 0 || (pair.image.rows == height && pair.image.cols == width),
                      source << ":" << line.number << ": " << line.image << " gives an item of "
                             << pair.image.cols << "x" << pair.image.rows << ", the first image "
                             << width << "x" << height
                             << " (give a crop to make them alike, as DeepLab asks)");
  // Padded to at least the crop at the bottom and right, then cropped.
  const int padded_rows = std::max(pair.image.rows, height);
  const int padded_cols = std::max(pair.image.cols, width);
  int h_off = 0, w_off = 0;
  if (crop_height_ > 0) {
    if (this->phase_ == TRAIN) {
      h_off = static_cast<int>((*rng)() % (padded_rows - height + 1));
      w_off = static_cast<int>((*rng)() % (padded_cols - width + 1));
    } else {
      h_off = (padded_rows - height) / 2;
      w_off = (padded_cols - width) / 2;
    }
  }
  const Dtype scale = static_cast<Dtype>(own_.scale());
  const Dtype ignore = static_cast<Dtype>(this->layer_param_.image_data_param().ignore_label());
  const cv::Mat& image = pair.image;
  const cv::Mat& classes_map = pair.labels;
  for (int h = 0; h < height; ++h) {
    const int row = h + h_off;
    const bool row_inside = row < image.rows;
    const uint8_t* pixels = row_inside ? image.ptr<uint8_t>(row) : nullptr;
    const uint8_t* classes = row_inside ? classes_map.ptr<uint8_t>(row) : nullptr;
    for (int w = 0; w < width; ++w) {
      const int col = w + w_off;
      const bool inside = row_inside && col < image.cols;
      const int out_w = mirror ? width - 1 - w : w;
      for (int c = 0; c < channels; ++c) {
        const Dtype pixel = inside ? static_cast<Dtype>(pixels[col * channels + c]) : mean_[c];
        data[(c * height + h) * width + out_w] = (pixel - mean_[c]) * scale;
      }
      labels[h * width + out_w] = inside ? static_cast<Dtype>(classes[col]) : ignore;
    }
  }
}

template <typename Dtype>
const typename ImageSegDataLayer<Dtype>::Line& ImageSegDataLayer<Dtype>::NextLine() {
  const Line& line = lines_[walk_.current()];
  walk_.Advance();
  return line;
}

template <typename Dtype>
void ImageSegDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const std::vector<int>& shape = batch->data_.shape();
  const int item_size = batch->data_.count(1);
  const int label_size = shape[2] * shape[3];
  // Without a label top the labels go to a scratch buffer.
  std::vector<Dtype> scratch;
  Dtype* data = batch->data_.mutable_cpu_data();
  Dtype* labels = nullptr;
  if (this->top_count_ > 1) {
    labels = batch->label_.mutable_cpu_data();
  } else {
    scratch.resize(label_size);
  }
  Dtype* dims = this->top_count_ > 2 ? batch->extra_.mutable_cpu_data() : nullptr;
  for (int i = 0; i < shape[0]; ++i) {
    const Line& line = NextLine();
    RNG rng(seed_ + items_loaded_++ * kSeedSpread);  // this item's draws
    Pair pair = LoadPair(line);
    if (dims) {
      dims[2 * i] = static_cast<Dtype>(std::min(shape[2], pair.image.rows));
      dims[2 * i + 1] = static_cast<Dtype>(std::min(shape[3], pair.image.cols));
    }
    FillItem(line, std::move(pair), &rng, shape, data + i * item_size,
             labels ? labels + i * label_size : scratch.data());
  }
}

INSTANTIATE_CLASS(ImageSegDataLayer);
REGISTER_LAYER_CLASS(ImageSegData);

}  // namespace crema

#endif  // CREMA_OPENCV
