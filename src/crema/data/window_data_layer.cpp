#include "crema/data/window_data_layer.hpp"

#ifdef CREMA_OPENCV

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <opencv2/imgproc/imgproc.hpp>

#include "crema/util/image_io.hpp"
#include "crema/util/io.hpp"

namespace crema {

namespace {

// Caffe's split: int(batch_size * fg_fraction) foreground windows per batch.
int ForegroundPerBatch(int batch_size, float fg_fraction) {
  return static_cast<int>(static_cast<float>(batch_size) * fg_fraction);
}

struct WarpOptions {
  int crop_size;
  int context_pad;
  bool square;
};

// Where a window lands in its crop x crop output: the part of the image to
// warp, the size it is warped to, and the zero padding above and left of it.
struct WarpPlan {
  cv::Rect roi;
  cv::Size size;
  int pad_h = 0;
  int pad_w = 0;
};

// Caffe's arithmetic, in Dtype as Caffe computes it, so windows land on the
// same pixels: the box (or the square around it) is widened so that, warped
// to crop x crop, it shows context_pad pixels of context on each side. What
// of that lies outside the image becomes zero padding; a mirrored window
// mirrors its padding too.
template <typename Dtype>
WarpPlan PlanWarp(const cv::Rect& box, const cv::Size& image, const WarpOptions& options,
                  bool mirror) {
  const int crop = options.crop_size;
  WarpPlan plan;
  plan.roi = box;
  plan.size = cv::Size(crop, crop);
  if (options.context_pad == 0 && !options.square) return plan;

  const Dtype context_scale =
      static_cast<Dtype>(crop) / static_cast<Dtype>(crop - 2 * options.context_pad);
  Dtype half_height = static_cast<Dtype>(box.height) / 2.0;
  Dtype half_width = static_cast<Dtype>(box.width) / 2.0;
  const Dtype center_x = static_cast<Dtype>(box.x) + half_width;
  const Dtype center_y = static_cast<Dtype>(box.y) + half_height;
  if (options.square) half_width = half_height = std::max(half_width, half_height);
  const int x1 = static_cast<int>(std::round(center_x - half_width * context_scale));
  const int x2 = static_cast<int>(std::round(center_x + half_width * context_scale));
  const int y1 = static_cast<int>(std::round(center_y - half_height * context_scale));
  const int y2 = static_cast<int>(std::round(center_y + half_height * context_scale));

  // The widened box, clipped to the image; what was cut off on each side.
  const int pad_x1 = std::max(0, -x1), pad_y1 = std::max(0, -y1);
  const int pad_x2 = std::max(0, x2 - image.width + 1);
  const int pad_y2 = std::max(0, y2 - image.height + 1);
  plan.roi = cv::Rect(x1 + pad_x1, y1 + pad_y1, (x2 - pad_x2) - (x1 + pad_x1) + 1,
                      (y2 - pad_y2) - (y1 + pad_y1) + 1);

  // Everything scales as the whole widened box would to crop x crop.
  const Dtype scale_x = static_cast<Dtype>(crop) / static_cast<Dtype>(x2 - x1 + 1);
  const Dtype scale_y = static_cast<Dtype>(crop) / static_cast<Dtype>(y2 - y1 + 1);
  const auto scaled = [](int length, Dtype scale) {
    return static_cast<int>(std::round(static_cast<Dtype>(length) * scale));
  };
  plan.pad_h = scaled(pad_y1, scale_y);
  plan.pad_w = mirror ? scaled(pad_x2, scale_x) : scaled(pad_x1, scale_x);
  // Rounding may leave the warped part plus its padding a pixel too large.
  plan.size.height = std::min(scaled(plan.roi.height, scale_y), crop - plan.pad_h);
  plan.size.width = std::min(scaled(plan.roi.width, scale_x), crop - plan.pad_w);
  // May be 0 (a thin box of a narrow image, widened to a square): the layer
  // refuses such windows at set-up (CheckWarps).
  return plan;
}

WarpOptions WarpOptionsOf(const WindowDataParameter& param, int crop_size) {
  return {crop_size, static_cast<int>(param.context_pad()), param.crop_mode() == "square"};
}

// A window's corners (inclusive pixel coordinates) as an OpenCV rectangle.
cv::Rect InclusiveBox(int x1, int y1, int x2, int y2) {
  return cv::Rect(x1, y1, x2 - x1 + 1, y2 - y1 + 1);
}

// Writes the warped window into `out` (channels x crop x crop) at its
// padding's offset as (pixel - mean) * scale; the mean is the same place of
// the mean file's centred crop x crop part, or one value per channel. The
// padding keeps its zeros, as in Caffe.
template <typename Dtype>
void WriteWarped(const cv::Mat& warped, const WarpPlan& plan, int crop, const Blob<Dtype>& mean,
                 const std::vector<Dtype>& mean_values, Dtype scale, Dtype* out) {
  const int channels = warped.channels();
  const Dtype* mean_data = mean.count() > 0 ? mean.cpu_data() : nullptr;
  const int mean_height = mean_data ? mean.height() : 0, mean_width = mean_data ? mean.width() : 0;
  const int mean_off_h = (mean_height - crop) / 2, mean_off_w = (mean_width - crop) / 2;
  for (int h = 0; h < warped.rows; ++h) {
    const uint8_t* row = warped.ptr<uint8_t>(h);
    const int y = h + plan.pad_h;
    for (int w = 0; w < warped.cols; ++w) {
      const int x = w + plan.pad_w;
      for (int c = 0; c < channels; ++c) {
        Dtype mean_value = 0;
        if (mean_data) {
          mean_value = mean_data[(c * mean_height + y + mean_off_h) * mean_width + x + mean_off_w];
        } else if (!mean_values.empty()) {
          mean_value = mean_values[c];
        }
        out[(c * crop + y) * crop + x] =
            (static_cast<Dtype>(row[w * channels + c]) - mean_value) * scale;
      }
    }
  }
}

// An image file's bytes as an encoded Datum: cache_images keeps images
// encoded, as Caffe does, and decodes them when a window is drawn.
Datum ReadEncodedImage(const std::string& path) {
  CREMA_REQUIRE(FileExists(path), path << ": no such image file");
  std::ifstream file(path, std::ios::binary);
  CREMA_REQUIRE(file.good(), path << ": cannot open image file");
  Datum datum;
  datum.set_encoded(true);
  datum.set_data(
      std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()));
  return datum;
}

}  // namespace

template <typename Dtype>
class WindowDataLayer<Dtype>::WordReader {
 public:
  WordReader(std::istream* in, const WindowDataLayer* layer) : in_(in), layer_(layer) {}

  // Skips white space; true when nothing else is left.
  bool AtEnd() {
    for (int c = in_->peek(); c != EOF && std::isspace(c); c = in_->peek()) {
      if (c == '\n') ++line_;
      in_->get();
    }
    return in_->peek() == EOF;
  }
  // The line of the word read last (of the next one, after AtEnd).
  int line() const { return line_; }

  std::string Word(const char* what) {
    if (AtEnd()) {
      line_ = last_word_line_;  // name the line the file ends after
      Require(false, what, "the end of the file");
    }
    last_word_line_ = line_;
    std::string word;
    for (int c = in_->peek(); c != EOF && !std::isspace(c); c = in_->peek()) {
      word.push_back(static_cast<char>(in_->get()));
    }
    return word;
  }
  int Int(const char* what) {
    return Number<int>(what,
                       [](const std::string& word, size_t* used) { return std::stoi(word, used); });
  }
  float Float(const char* what) {
    return Number<float>(
        what, [](const std::string& word, size_t* used) { return std::stof(word, used); });
  }

 private:
  template <typename T, typename Parse>
  T Number(const char* what, Parse parse) {
    const std::string word = Word(what);
    size_t used = 0;
    T value = 0;
    try {
      value = parse(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    Require(used == word.size(), what, "'" + word + "'");
    return value;
  }
  void Require(bool condition, const char* what, const std::string& found) const {
    CREMA_REQUIRE(condition, "layer '" << layer_->layer_param_.name()
                                       << "' (WindowData): " << layer_->Where(line_)
                                       << ": expected " << what << ", found " << found);
  }

  std::istream* in_;
  const WindowDataLayer* layer_;
  int line_ = 1;
  int last_word_line_ = 1;
};

template <typename Dtype>
WindowDataLayer<Dtype>::~WindowDataLayer() {
  // The prefetch thread reads the windows and the images: stop it first.
  this->StopInternalThread();
}

template <typename Dtype>
std::string WindowDataLayer<Dtype>::Where(int line) const {
  return this->layer_param_.window_data_param().source() + " line " + std::to_string(line);
}

template <typename Dtype>
void WindowDataLayer<Dtype>::ReadWindowFile() {
  const std::string& source = this->layer_param_.window_data_param().source();
  CREMA_LAYER_REQUIRE(!source.empty(), "window_data_param.source (the window file) is not given");
  std::ifstream file(source);
  CREMA_LAYER_REQUIRE(file.good(), "cannot open the window file " << source);
  WordReader words(&file, this);
  CREMA_LAYER_REQUIRE(!words.AtEnd(), "the window file " << source << " is empty");
  while (!words.AtEnd()) ReadImageBlock(&words);
  // The window file's channels choose grey or colour; force_* may only agree.
  const TransformationParameter& transform = this->transform_param_;
  CREMA_LAYER_REQUIRE(
      !(transform.force_gray() && channels_ == 3) && !(transform.force_color() && channels_ == 1),
      "transform_param asks for " << (transform.force_gray() ? "grey" : "colour")
                                  << " images, the window file " << source << " gives " << channels_
                                  << " channels");
}

// A block: "# index", the image's path, channels, height, width, the number
// of windows, then one line per window.
template <typename Dtype>
void WindowDataLayer<Dtype>::ReadImageBlock(WordReader* words) {
  WindowImage image;
  image.line = words->line();
  const std::string hash = words->Word("'#' starting an image block");
  CREMA_LAYER_REQUIRE(hash == "#", Where(image.line) << ": expected '#' starting an image block, "
                                                     << "found '" << hash << "'");
  const int index = words->Int("the image index after '#'");
  CREMA_LAYER_REQUIRE(index == static_cast<int>(images_.size()),
                      Where(image.line)
                          << ": image index " << index << ", expected " << images_.size()
                          << " (the blocks are numbered from 0, in order)");
  image.path = this->layer_param_.window_data_param().root_folder() + words->Word("the image path");
  const int channels = words->Int("the image's channels");
  CREMA_LAYER_REQUIRE(channels == 1 || channels == 3,
                      Where(words->line()) << ": " << image.path << " has " << channels
                                           << " channels; WindowData reads grey (1) or colour "
                                              "(3) images");
  if (images_.empty()) channels_ = channels;
  CREMA_LAYER_REQUIRE(channels == channels_, Where(words->line())
                                                 << ": " << image.path << " has " << channels
                                                 << " channels, the first image " << channels_
                                                 << "; all images of a window file need the same");
  image.height = words->Int("the image's height");
  image.width = words->Int("the image's width");
  CREMA_LAYER_REQUIRE(image.height > 0 && image.width > 0,
                      Where(words->line()) << ": " << image.path << " is " << image.height
                                           << " high and " << image.width << " wide");
  const int num_windows = words->Int("the number of windows");
  CREMA_LAYER_REQUIRE(num_windows >= 0, Where(words->line()) << ": " << num_windows << " windows");
  images_.push_back(image);
  for (int i = 0; i < num_windows; ++i) ReadWindow(words, index);
}

// A window line: class, overlap, x1 y1 x2 y2.
template <typename Dtype>
void WindowDataLayer<Dtype>::ReadWindow(WordReader* words, int image) {
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  Window window;
  window.image = image;
  window.label = words->Int("a window's class");
  window.line = words->line();
  const float overlap = words->Float("the window's overlap");
  window.x1 = words->Int("the window's x1");
  window.y1 = words->Int("the window's y1");
  window.x2 = words->Int("the window's x2");
  window.y2 = words->Int("the window's y2");
  const WindowImage& owner = images_[image];
  CREMA_LAYER_REQUIRE(0 <= window.x1 && window.x1 <= window.x2 && window.x2 < owner.width &&
                          0 <= window.y1 && window.y1 <= window.y2 && window.y2 < owner.height,
                      Where(window.line)
                          << ": the window x1 y1 x2 y2 = " << window.x1 << " " << window.y1 << " "
                          << window.x2 << " " << window.y2 << " is not inside the image "
                          << owner.path << " (" << owner.width << " wide, " << owner.height
                          << " high; corners are inclusive pixel coordinates from 0)");
  if (overlap >= param.fg_threshold()) {
    CREMA_LAYER_REQUIRE(window.label > 0, Where(window.line)
                                              << ": a foreground window (overlap " << overlap
                                              << " >= fg_threshold " << param.fg_threshold()
                                              << ") has class " << window.label
                                              << "; classes of objects are positive, 0 is "
                                                 "background");
    fg_windows_.push_back(window);
  } else if (overlap < param.bg_threshold()) {
    window.label = 0;
    bg_windows_.push_back(window);
  } else {
    ++dropped_windows_;
  }
}

// Caffe reads crop_size, mirror and mean_file from transform_param (upgrading
// a V1 net moves window_data_param's copies there) but scale from
// window_data_param. Here each may stand in either place; two different
// values are an error.
template <typename Dtype>
void WindowDataLayer<Dtype>::ResolveTransform() {
  const TransformationParameter& transform = this->transform_param_;
  const WindowDataParameter& window = this->layer_param_.window_data_param();
  const auto pick = [this](const char* field, bool in_transform, auto transform_value,
                           bool in_window, auto window_value) {
    CREMA_LAYER_REQUIRE(!in_transform || !in_window || transform_value == window_value,
                        "transform_param." << field << " (" << transform_value
                                           << ") and window_data_param." << field << " ("
                                           << window_value << ") differ; give it once");
    return in_window && !in_transform ? window_value : transform_value;
  };
  crop_size_ = static_cast<int>(pick("crop_size", transform.has_crop_size(), transform.crop_size(),
                                     window.has_crop_size(), window.crop_size()));
  mirror_ = pick("mirror", transform.has_mirror(), transform.mirror(), window.has_mirror(),
                 window.mirror());
  scale_ = static_cast<Dtype>(
      pick("scale", transform.has_scale(), transform.scale(), window.has_scale(), window.scale()));
  mean_file_ = pick("mean_file", transform.has_mean_file(), transform.mean_file(),
                    window.has_mean_file(), window.mean_file());
  CREMA_LAYER_REQUIRE(crop_size_ > 0,
                      "crop_size must be positive: windows are warped to "
                      "crop_size x crop_size (transform_param.crop_size)");
  CREMA_LAYER_REQUIRE(static_cast<int64_t>(window.context_pad()) * 2 < crop_size_,
                      "context_pad " << window.context_pad() << " on both sides leaves nothing of "
                                     << "crop_size " << crop_size_ << " for the window");
  CREMA_LAYER_REQUIRE(window.crop_mode() == "warp" || window.crop_mode() == "square",
                      "crop_mode '" << window.crop_mode() << "' is neither 'warp' nor 'square'");
}

template <typename Dtype>
void WindowDataLayer<Dtype>::LoadMean() {
  const TransformationParameter& transform = this->transform_param_;
  CREMA_LAYER_REQUIRE(mean_file_.empty() || transform.mean_value_size() == 0,
                      "give mean_file or mean_value, not both");
  if (!mean_file_.empty()) {
    BlobProto proto;
    try {
      ReadProtoFromBinaryFile(mean_file_, &proto);
    } catch (const Error& e) {
      CREMA_LAYER_REQUIRE(false, "the mean file: " << e.what());
    }
    try {
      mean_.FromProto(proto);
    } catch (const Error& e) {
      CREMA_LAYER_REQUIRE(false, "the mean file " << mean_file_ << ": " << e.what());
    }
    CREMA_LAYER_REQUIRE(
        mean_.num_axes() == 4 && mean_.num() == 1 && mean_.channels() == channels_ &&
            mean_.height() >= crop_size_ && mean_.width() >= crop_size_,
        "the mean file " << mean_file_ << " has shape " << mean_.shape_string() << "; it needs 1 x "
                         << channels_ << " x at least " << crop_size_ << " x " << crop_size_);
    mean_.cpu_data();  // on this thread, before the prefetch thread reads it
  }
  const int values = transform.mean_value_size();
  CREMA_LAYER_REQUIRE(values == 0 || values == 1 || values == channels_,
                      "mean_value has " << values << " values for " << channels_
                                        << " channels; give one, or one per channel");
  mean_values_.clear();
  for (int c = 0; values > 0 && c < channels_; ++c) {
    mean_values_.push_back(static_cast<Dtype>(transform.mean_value(values == 1 ? 0 : c)));
  }
}

// Images missing now fail at set-up, naming their block; with cache_images
// every file is read here.
template <typename Dtype>
void WindowDataLayer<Dtype>::CheckImages() {
  const bool cache = this->layer_param_.window_data_param().cache_images();
  for (const WindowImage& image : images_) {
    try {
      if (cache) {
        image_cache_.push_back(ReadEncodedImage(image.path));
      } else {
        CREMA_REQUIRE(FileExists(image.path), image.path << ": no such image file");
      }
    } catch (const Error& e) {
      CREMA_LAYER_REQUIRE(false, Where(image.line) << ": " << e.what());
    }
  }
}

// Every window that may be drawn must keep at least one pixel once warped
// (OpenCV's resize aborts on an empty size); the image sizes are the window
// file's, which LoadItem holds the files to.
template <typename Dtype>
void WindowDataLayer<Dtype>::CheckWarps() const {
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  const WarpOptions options = WarpOptionsOf(param, crop_size_);
  for (const std::vector<Window>* windows : {&fg_windows_, &bg_windows_}) {
    for (const Window& window : *windows) {
      const WindowImage& image = images_[window.image];
      const cv::Rect box = InclusiveBox(window.x1, window.y1, window.x2, window.y2);
      for (bool mirror : {false, mirror_}) {
        const cv::Size size =
            PlanWarp<Dtype>(box, cv::Size(image.width, image.height), options, mirror).size;
        CREMA_LAYER_REQUIRE(size.height > 0 && size.width > 0,
                            Where(window.line)
                                << ": the window x1 y1 x2 y2 = " << window.x1 << " " << window.y1
                                << " " << window.x2 << " " << window.y2 << " of " << image.path
                                << " (" << image.width << " wide, " << image.height
                                << " high) warps to " << size.width << "x" << size.height
                                << " pixels of the " << crop_size_ << "x" << crop_size_
                                << " crop (crop_mode '" << param.crop_mode()
                                << "'); it needs at least 1x1");
      }
    }
  }
}

// Caffe needs both kinds of windows always; only those the split draws from
// are needed here.
template <typename Dtype>
void WindowDataLayer<Dtype>::RequireWindowsForFraction(int batch_size) const {
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  const float fraction = param.fg_fraction();
  CREMA_LAYER_REQUIRE(fraction >= 0 && fraction <= 1,
                      "fg_fraction " << fraction << " is not between 0 and 1");
  const int num_fg = ForegroundPerBatch(batch_size, fraction);
  CREMA_LAYER_REQUIRE(num_fg == 0 || !fg_windows_.empty(),
                      "the window file " << param.source()
                                         << " has no foreground windows (overlap >= "
                                            "fg_threshold "
                                         << param.fg_threshold() << "), and fg_fraction "
                                         << fraction << " asks for " << num_fg
                                         << " in each batch of " << batch_size);
  CREMA_LAYER_REQUIRE(num_fg == batch_size || !bg_windows_.empty(),
                      "the window file " << param.source()
                                         << " has no background windows (overlap < "
                                            "bg_threshold "
                                         << param.bg_threshold() << "), and fg_fraction "
                                         << fraction << " asks for " << batch_size - num_fg
                                         << " in each batch of " << batch_size);
}

template <typename Dtype>
void WindowDataLayer<Dtype>::LogSummary(int batch_size) const {
  if (!Context::is_rank_zero()) return;
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  const int num_fg = ForegroundPerBatch(batch_size, param.fg_fraction());
  LOG(INFO) << "WindowData '" << this->layer_param_.name() << "': " << images_.size() << " images; "
            << fg_windows_.size() << " foreground windows (overlap >= " << param.fg_threshold()
            << "), " << bg_windows_.size() << " background (< " << param.bg_threshold() << "), "
            << dropped_windows_ << " unused; each batch " << num_fg << " foreground and "
            << batch_size - num_fg << " background, " << param.crop_mode() << " crops, context_pad "
            << param.context_pad() << (param.cache_images() ? ", images cached" : "");
  std::map<int, int> per_class;
  for (const Window& window : fg_windows_) ++per_class[window.label];
  for (const auto& [label, count] : per_class) {
    VLOG(1) << "class " << label << ": " << count << " windows";
  }
  LOG(INFO) << "output data size: " << batch_size << "," << channels_ << "," << crop_size_ << ","
            << crop_size_;
}

template <typename Dtype>
void WindowDataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                            const std::vector<Blob<Dtype>*>& top) {
  const uint32_t asked_batch = this->layer_param_.window_data_param().batch_size();
  CREMA_LAYER_REQUIRE(asked_batch > 0 && asked_batch <= INT32_MAX,
                      "batch_size must be positive, got " << asked_batch);
  const int batch_size = static_cast<int>(asked_batch);
  ResolveTransform();
  ReadWindowFile();
  RequireWindowsForFraction(batch_size);
  CheckWarps();
  LoadMean();
  CheckImages();
  seed_ = DrawSeed();
  batches_loaded_ = 0;

  const std::vector<int> shape{batch_size, channels_, crop_size_, crop_size_};
  top[0]->Reshape(shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(shape);
  const std::vector<int> label_shape{batch_size};
  top[1]->Reshape(label_shape);
  for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
  LogSummary(batch_size);
}

template <typename Dtype>
std::vector<typename WindowDataLayer<Dtype>::Draw> WindowDataLayer<Dtype>::DrawWindows(
    int batch_size) const {
  const int num_bg =
      batch_size -
      ForegroundPerBatch(batch_size, this->layer_param_.window_data_param().fg_fraction());
  RNG& rng = Context::rng();
  std::vector<Draw> draws;
  draws.reserve(batch_size);
  for (int item = 0; item < batch_size; ++item) {
    const std::vector<Window>& windows = item < num_bg ? bg_windows_ : fg_windows_;
    const Window* window = &windows[rng() % windows.size()];
    const bool mirror = mirror_ && rng() % 2;
    draws.push_back({window, mirror});
  }
  return draws;
}

template <typename Dtype>
void WindowDataLayer<Dtype>::LoadItem(const Draw& draw, Dtype* out) const {
  const Window& window = *draw.window;
  const WindowImage& image = images_[window.image];
  cv::Mat pixels;
  try {
    const ImageColor color = channels_ == 1 ? ImageColor::kGray : ImageColor::kColor;
    pixels = image_cache_.empty()
                 ? ReadImageToCVMat(image.path, color)
                 : DecodeDatumToCVMat(image_cache_[window.image], color, image.path);
    CREMA_REQUIRE(pixels.rows == image.height && pixels.cols == image.width,
                  image.path << " is " << pixels.cols << " wide and " << pixels.rows
                             << " high; its block says " << image.width << " and " << image.height);
  } catch (const Error& e) {
    CREMA_LAYER_REQUIRE(false, Where(image.line) << ": " << e.what());
  }
  const WarpPlan plan = PlanWarp<Dtype>(
      InclusiveBox(window.x1, window.y1, window.x2, window.y2), pixels.size(),
      WarpOptionsOf(this->layer_param_.window_data_param(), crop_size_), draw.mirror);
  cv::Mat warped;
  cv::resize(pixels(plan.roi), warped, plan.size, 0, 0, cv::INTER_LINEAR);
  if (draw.mirror) cv::flip(warped, warped, 1);
  WriteWarped(warped, plan, crop_size_, mean_, mean_values_, scale_, out);
}

template <typename Dtype>
void WindowDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  // Batch k's draws come from the seed and k alone, whenever the thread runs.
  Context::rng().Seed(seed_ + batches_loaded_++ * kSeedSpread);
  const int batch_size = batch->data_.shape(0);
  const std::vector<Draw> draws = DrawWindows(batch_size);
  const int item_size = batch->data_.count(1);
  Dtype* data = batch->data_.mutable_cpu_data();
  Dtype* label = batch->label_.mutable_cpu_data();
  std::fill(data, data + batch->data_.count(), Dtype(0));
  for (int item = 0; item < batch_size; ++item) {
    LoadItem(draws[item], data + item * item_size);
    label[item] = static_cast<Dtype>(draws[item].window->label);
  }
}

INSTANTIATE_CLASS(WindowDataLayer);
REGISTER_LAYER_CLASS(WindowData);

}  // namespace crema

#endif  // CREMA_OPENCV
