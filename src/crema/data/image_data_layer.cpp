#include "crema/data/image_data_layer.hpp"

#ifdef CREMA_OPENCV

#include <algorithm>
#include <numeric>

#include "crema/data/converters/convert_imageset.hpp"
#include "crema/util/image_io.hpp"

namespace crema {

template <typename Dtype>
ImageDataLayer<Dtype>::~ImageDataLayer() {
  // The prefetch thread reads lines_ and the pool: stop it first.
  this->StopInternalThread();
}

template <typename Dtype>
void ImageDataLayer<Dtype>::ReadList() {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  std::vector<ImageListEntry> entries;
  try {
    entries = ReadImageList(param.source());  // the parser convert_imageset uses
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (ImageData): " << e.what());
  }
  CREMA_LAYER_REQUIRE(!entries.empty(), "the list file " << param.source() << " names no images");
  for (const ImageListEntry& entry : entries) {
    lines_.push_back({param.root_folder() + entry.path, entry.label, entry.line});
  }
}

template <typename Dtype>
int ImageDataLayer<Dtype>::ChooseDecodeThreads() const {
  const int asked = static_cast<int>(this->layer_param_.image_data_param().decode_threads());
  if (asked > 0) return asked;
  return Context::mode() == Context::GPU ? ThreadBudget() : 1;
}

template <typename Dtype>
void ImageDataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                           const std::vector<Blob<Dtype>*>& top) {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  CREMA_LAYER_REQUIRE(param.batch_size() > 0, "batch_size must be positive");
  CREMA_LAYER_REQUIRE((param.new_height() == 0) == (param.new_width() == 0),
                      "give both new_height and new_width, or neither");
  ReadList();
  seed_ = DrawSeed();
  if (resume_) {
    seed_ = resume_->seed();
    start_ = {resume_->epoch(), resume_->line()};
    start_batches_ = resume_->batches();
    CREMA_LAYER_REQUIRE(start_.line < lines_.size(), "the solver state's position (line "
                                                         << start_.line << ") does not fit the "
                                                         << lines_.size() << " lines of "
                                                         << param.source());
  } else if (param.rand_skip()) {
    start_.line = Context::rng()() % param.rand_skip() % lines_.size();
    LOG(INFO) << "Skipping first " << start_.line << " images.";
  }
  next_ = start_;
  this->batches_served_ = start_batches_;
  batches_loaded_ = start_batches_;
  order_ = OrderFor(start_.epoch);
  order_epoch_ = start_.epoch;
  decode_threads_ = ChooseDecodeThreads();
  if (decode_threads_ > 1) decode_pool_.reset(new ThreadPool(decode_threads_ - 1));
  // The first image gives the shape.
  const Line& first = lines_[order_[start_.line]];
  const cv::Mat image =
      ReadImageToCVMat(first.file, param.is_color() ? ImageColor::kColor : ImageColor::kGray,
                       param.new_height(), param.new_width());
  std::vector<int> shape = this->data_transformer_->InferBlobShape(image);
  shape[0] = static_cast<int>(param.batch_size());
  top[0]->Reshape(shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(shape);
  const std::vector<int> label_shape{static_cast<int>(param.batch_size())};
  top[1]->Reshape(label_shape);
  for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
  LOG_IF(INFO, Context::is_rank_zero())
      << "output data size: " << shape[0] << "," << shape[1] << "," << shape[2] << "," << shape[3]
      << " (" << lines_.size() << " images, " << decode_threads_ << " decode thread"
      << (decode_threads_ > 1 ? "s" : "") << ")";
}

template <typename Dtype>
std::vector<int> ImageDataLayer<Dtype>::OrderFor(uint64_t epoch) const {
  if (this->layer_param_.image_data_param().shuffle()) {
    return PassOrder<int>(lines_.size(), seed_, epoch);
  }
  std::vector<int> order(lines_.size());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

template <typename Dtype>
void ImageDataLayer<Dtype>::Advance(Position* position) {
  if (++position->line < lines_.size()) return;
  position->line = 0;
  ++position->epoch;
}

template <typename Dtype>
void ImageDataLayer<Dtype>::LoadImage(const Line& line, uint64_t item, Dtype* out,
                                      const std::vector<int>& shape) {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  try {
    const cv::Mat image =
        ReadImageToCVMat(line.file, param.is_color() ? ImageColor::kColor : ImageColor::kGray,
                         param.new_height(), param.new_width());
    // The shape, not only the size: 4x3 into a batch of 3x4 would be read
    // across rows.
    const std::vector<int> image_shape = this->data_transformer_->InferBlobShape(image);
    CREMA_REQUIRE(
        std::equal(image_shape.begin() + 1, image_shape.end(), shape.begin() + 1, shape.end()),
        line.file << ": an image of " << image.channels() << "x" << image.rows << "x" << image.cols
                  << " transforms to " << image_shape[1] << "x" << image_shape[2] << "x"
                  << image_shape[3] << ", the first image to " << shape[1] << "x" << shape[2] << "x"
                  << shape[3] << " (give new_height and new_width to resize them all)");
    // This image's random crop and mirror depend on its place in the stream
    // only, whichever thread transforms it.
    Context::rng().Seed(seed_ + item * kSeedSpread);
    this->data_transformer_->Transform(image, out);
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (ImageData): " << param.source() << ":"
                         << line.number << ": " << e.what());
  }
}

template <typename Dtype>
void ImageDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const int batch_size = batch->data_.shape(0);
  const int item_size = batch->data_.count(1);
  const std::vector<int>& shape = batch->data_.shape();
  // The lines of this batch, chosen in order on this thread.
  std::vector<const Line*> lines(batch_size);
  for (int i = 0; i < batch_size; ++i) {
    if (order_epoch_ != next_.epoch) {
      order_ = OrderFor(next_.epoch);
      order_epoch_ = next_.epoch;
    }
    lines[i] = &lines_[order_[next_.line]];
    Advance(&next_);
  }
  const uint64_t first_item = batches_loaded_++ * batch_size;
  Dtype* data = batch->data_.mutable_cpu_data();
  Dtype* label = batch->label_.mutable_cpu_data();
  const auto load = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      LoadImage(*lines[i], first_item + i, data + i * item_size, shape);
      label[i] = static_cast<Dtype>(lines[i]->label);
    }
  };
  if (decode_pool_) {
    decode_pool_->ParallelFor(batch_size, 1, load);
  } else {
    load(0, batch_size);
  }
}

template <typename Dtype>
std::string ImageDataLayer<Dtype>::ResumeKey() const {
  return DataSourceKey(this->layer_param_, this->layer_param_.image_data_param().source());
}

// The batches served consumed their lines; those prefetched did not.
template <typename Dtype>
void ImageDataLayer<Dtype>::AppendResumeState(SolverState* state) const {
  const uint64_t batch_size = this->layer_param_.image_data_param().batch_size();
  const uint64_t consumed = (this->batches_served_ - start_batches_) * batch_size;
  const uint64_t absolute = start_.epoch * lines_.size() + start_.line + consumed;
  ImageDataPosition* position = state->add_image_data_position();
  position->set_key(ResumeKey());
  position->set_epoch(absolute / lines_.size());
  position->set_line(absolute % lines_.size());
  position->set_batches(this->batches_served_);
  position->set_seed(seed_);
}

template <typename Dtype>
void ImageDataLayer<Dtype>::RestoreResumeState(const SolverState& state) {
  const std::string key = ResumeKey();
  for (const ImageDataPosition& position : state.image_data_position()) {
    if (position.key() == key) resume_.reset(new ImageDataPosition(position));
  }
}

INSTANTIATE_CLASS(ImageDataLayer);
REGISTER_LAYER_CLASS(ImageData);

}  // namespace crema

#endif  // CREMA_OPENCV
