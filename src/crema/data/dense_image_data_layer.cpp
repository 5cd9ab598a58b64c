#include "crema/data/dense_image_data_layer.hpp"

#ifdef CREMA_OPENCV

#include <algorithm>
#include <opencv2/imgproc/imgproc.hpp>

#include "crema/data/converters/convert_imageset.hpp"
#include "crema/util/image_io.hpp"

namespace crema {

template <typename Dtype>
DenseImageDataLayer<Dtype>::~DenseImageDataLayer() {
  // The prefetch thread reads lines_: stop it first.
  this->StopInternalThread();
}

template <typename Dtype>
void DenseImageDataLayer<Dtype>::CheckSettings() const {
  const DenseImageDataParameter& param = this->layer_param_.dense_image_data_param();
  CREMA_LAYER_REQUIRE(param.batch_size() > 0 && param.batch_size() <= INT32_MAX,
                      "dense_image_data_param.batch_size must be positive");
  CREMA_LAYER_REQUIRE((param.new_height() == 0) == (param.new_width() == 0),
                      "give both new_height and new_width, or neither");
  CREMA_LAYER_REQUIRE((param.crop_height() == 0) == (param.crop_width() == 0),
                      "give both crop_height and crop_width, or neither");
  const TransformationParameter& transform = this->layer_param_.transform_param();
  CREMA_LAYER_REQUIRE(transform.crop_size() == 0 && !transform.mirror(),
                      "transform_param's crop_size and mirror would move the image and not its "
                      "labels; give dense_image_data_param's crop_height, crop_width and mirror");
  CREMA_LAYER_REQUIRE(!this->data_transformer_->draws_random_numbers(),
                      "transform_param's random augmentations would move the image and not "
                      "its labels");
}

template <typename Dtype>
void DenseImageDataLayer<Dtype>::ReadList() {
  const DenseImageDataParameter& param = this->layer_param_.dense_image_data_param();
  std::vector<ImageListEntry> entries;
  try {
    entries = ReadAnnotatedList(param.source());  // `image second-file` lines
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (DenseImageData): " << e.what());
  }
  CREMA_LAYER_REQUIRE(!entries.empty(), "the list file " << param.source() << " names no images");
  for (const ImageListEntry& entry : entries) {
    lines_.push_back(
        {param.root_folder() + entry.path, param.root_folder() + entry.annotation, entry.line});
  }
}

template <typename Dtype>
void DenseImageDataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                const std::vector<Blob<Dtype>*>& top) {
  CheckSettings();
  const DenseImageDataParameter& param = this->layer_param_.dense_image_data_param();
  ReadList();
  seed_ = DrawSeed();
  uint64_t skip = 0;
  if (param.rand_skip()) {
    skip = Context::rng()() % param.rand_skip() % lines_.size();
    LOG(INFO) << "Skipping first " << skip << " images.";
  }
  walk_ = PassWalk(lines_.size(), param.shuffle(), seed_, skip);
  // The first pair gives the shape.
  const Line& first = lines_[walk_.current()];
  Pair pair = LoadPair(first, nullptr);
  const int crop_height = static_cast<int>(param.crop_height());
  if (crop_height > 0) {  // the crop's size, wherever it falls
    pair.image = pair.image(cv::Rect(0, 0, std::min<int>(param.crop_width(), pair.image.cols),
                                     std::min(crop_height, pair.image.rows)));
  }
  std::vector<int> shape = this->data_transformer_->InferBlobShape(pair.image);
  shape[0] = static_cast<int>(param.batch_size());
  top[0]->Reshape(shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(shape);
  const std::vector<int> label_shape{shape[0], 1, shape[2], shape[3]};
  top[1]->Reshape(label_shape);
  for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
  LOG_IF(INFO, Context::is_rank_zero())
      << "output data size: " << shape[0] << "," << shape[1] << "," << shape[2] << "," << shape[3]
      << " (" << lines_.size() << " images with labels)";
}

template <typename Dtype>
typename DenseImageDataLayer<Dtype>::Pair DenseImageDataLayer<Dtype>::LoadPair(const Line& line,
                                                                               RNG* rng) const {
  const DenseImageDataParameter& param = this->layer_param_.dense_image_data_param();
  const int height = static_cast<int>(param.new_height());
  const int width = static_cast<int>(param.new_width());
  Pair pair;
  try {
    pair.image = ReadImageToCVMat(
        line.image, param.is_color() ? ImageColor::kColor : ImageColor::kGray, height, width);
    pair.labels = ReadLabelImageToCVMat(line.labels, height, width);
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (DenseImageData): " << param.source()
                         << ":" << line.number << ": " << e.what());
  }
  CREMA_LAYER_REQUIRE(pair.labels.rows == pair.image.rows && pair.labels.cols == pair.image.cols,
                      param.source()
                          << ":" << line.number << ": the image is " << pair.image.cols << "x"
                          << pair.image.rows << ", its labels " << pair.labels.cols << "x"
                          << pair.labels.rows << "; they must match pixel for pixel");
  if (!rng) return pair;  // the shape only
  if (param.mirror() && (*rng)() % 2) {
    cv::flip(pair.image, pair.image, 1);
    cv::flip(pair.labels, pair.labels, 1);
  }
  const int crop_height = static_cast<int>(param.crop_height());
  const int crop_width = static_cast<int>(param.crop_width());
  if (crop_height > 0) {
    CREMA_LAYER_REQUIRE(crop_height <= pair.image.rows && crop_width <= pair.image.cols,
                        param.source() << ":" << line.number << ": a crop of " << crop_width << "x"
                                       << crop_height << " does not fit the image of "
                                       << pair.image.cols << "x" << pair.image.rows);
    const int h_off = static_cast<int>((*rng)() % (pair.image.rows - crop_height + 1));
    const int w_off = static_cast<int>((*rng)() % (pair.image.cols - crop_width + 1));
    const cv::Rect window(w_off, h_off, crop_width, crop_height);
    pair.image = pair.image(window).clone();
    pair.labels = pair.labels(window).clone();
  }
  return pair;
}

template <typename Dtype>
void DenseImageDataLayer<Dtype>::FillItem(const Line& line, const Pair& pair,
                                          const std::vector<int>& shape, Dtype* data,
                                          Dtype* labels) const {
  const std::vector<int> image_shape = this->data_transformer_->InferBlobShape(pair.image);
  CREMA_LAYER_REQUIRE(
      std::equal(image_shape.begin() + 1, image_shape.end(), shape.begin() + 1, shape.end()),
      this->layer_param_.dense_image_data_param().source()
          << ":" << line.number << ": " << line.image << " gives an item of " << image_shape[1]
          << "x" << image_shape[2] << "x" << image_shape[3] << ", the first image " << shape[1]
          << "x" << shape[2] << "x" << shape[3]
          << " (give new_height and new_width, or a crop, to make them alike)");
  this->data_transformer_->Transform(pair.image, data);
  const Dtype scale = static_cast<Dtype>(this->layer_param_.transform_param().scale());
  const cv::Mat& label_image = pair.labels;
  for (int h = 0; h < label_image.rows; ++h) {
    const uint8_t* row = label_image.ptr<uint8_t>(h);
    for (int w = 0; w < label_image.cols; ++w) labels[h * label_image.cols + w] = row[w] * scale;
  }
}

template <typename Dtype>
const typename DenseImageDataLayer<Dtype>::Line& DenseImageDataLayer<Dtype>::NextLine() {
  const Line& line = lines_[walk_.current()];
  walk_.Advance();
  return line;
}

template <typename Dtype>
void DenseImageDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const std::vector<int>& shape = batch->data_.shape();
  const int item_size = batch->data_.count(1);
  const int label_size = batch->label_.count(1);
  Dtype* data = batch->data_.mutable_cpu_data();
  Dtype* labels = batch->label_.mutable_cpu_data();
  for (int i = 0; i < shape[0]; ++i) {
    const Line& line = NextLine();
    RNG rng(seed_ + items_loaded_++ * kSeedSpread);  // this item's draws
    const Pair pair = LoadPair(line, &rng);
    FillItem(line, pair, shape, data + i * item_size, labels + i * label_size);
  }
}

INSTANTIATE_CLASS(DenseImageDataLayer);
REGISTER_LAYER_CLASS(DenseImageData);

}  // namespace crema

#endif  // CREMA_OPENCV
