#include "crema/data/annotated_data_layer.hpp"

#include <algorithm>
#include <vector>

#include "crema/data/annotations.hpp"
#include "crema/detection/sampling.hpp"

#ifdef CREMA_OPENCV
#include "crema/data/detection_augmentation.hpp"
#endif

namespace crema {

template <typename Dtype>
AnnotatedDataLayer<Dtype>::AnnotatedDataLayer(const LayerParameter& param)
    : DataLayer<Dtype>(param), augmentation_(param.transform_param()) {
  const TransformationParameter& t = augmentation_;
  CREMA_LAYER_REQUIRE(t.crop_size() == 0,
                      "crop_size is not applied with boxes; crop by batch_sampler instead");
  CREMA_LAYER_REQUIRE(!augment::GeometryRequested(t),
                      "random_resized_crop and rotation_degrees would move the pixels without "
                      "the boxes; crop by batch_sampler and resize by resize_param instead");
  if (t.has_resize_param()) {
    const ResizeParameter& r = t.resize_param();
    CREMA_LAYER_REQUIRE(r.prob() == 1, "resize_param: prob " << r.prob()
                                                             << " would leave some images at "
                                                                "their own size; give prob 1");
    CREMA_LAYER_REQUIRE(r.resize_mode() != ResizeParameter::FIT_SMALL_SIZE,
                        "resize_param: resize_mode FIT_SMALL_SIZE gives images of different "
                        "sizes, which one batch cannot hold; use WARP or FIT_LARGE_SIZE_AND_PAD");
    CREMA_LAYER_REQUIRE(
        r.height() > 0 && r.width() > 0 && r.height() <= 65536 && r.width() <= 65536,
        "resize_param: height and width must be in [1, 65536]; got " << r.height() << " and "
                                                                     << r.width());
    CREMA_LAYER_REQUIRE(r.height_scale() == 0 && r.width_scale() == 0,
                        "resize_param: height_scale and width_scale (FIT_SMALL_SIZE's) are not "
                        "supported");
  }
  if (t.has_expand_param()) {
    CREMA_LAYER_REQUIRE(
        t.expand_param().max_expand_ratio() >= 1 && t.expand_param().max_expand_ratio() <= 16,
        "expand_param: max_expand_ratio must be in [1, 16]; got "
            << t.expand_param().max_expand_ratio());
  }
  try {
    if (t.has_distort_param()) {
#ifdef CREMA_OPENCV
      ssd::CheckDistortion(t.distort_param());
#endif
    }
    for (const BatchSampler& sampler : param.annotated_data_param().batch_sampler()) {
      ssd::CheckBatchSampler(sampler);
    }
    if (!param.annotated_data_param().label_map_file().empty()) {
      ssd::ReadLabelMap(param.annotated_data_param().label_map_file());
    }
  } catch (const Error& e) {
    CREMA_LAYER_REQUIRE(false, e.what());
  }
  // The plain transformer does the rest; AnnotatedData mirrors with the boxes.
  TransformationParameter& plain = this->transform_param_;
  plain.clear_resize_param();
  plain.clear_distort_param();
  plain.clear_expand_param();
  plain.clear_emit_constraint();
  plain.clear_mirror();
}

template <typename Dtype>
AnnotatedDataLayer<Dtype>::~AnnotatedDataLayer() {
  this->StopInternalThread();
}

#ifdef CREMA_OPENCV

namespace {

ImageColor ColorOf(const TransformationParameter& param) {
  return param.force_color()  ? ImageColor::kColor
         : param.force_gray() ? ImageColor::kGray
                              : ImageColor::kAsStored;
}

}  // namespace

template <typename Dtype>
void AnnotatedDataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  const DataRecord& first = this->StartReader();
  const int batch_size = static_cast<int>(this->layer_param_.data_param().batch_size());
  int channels = 0, height = 0, width = 0;
  try {
    const cv::Mat image = ssd::DatumImage(first.datum, ColorOf(augmentation_), "the record");
    channels = image.channels();
    height = augmentation_.has_resize_param() ? augmentation_.resize_param().height() : image.rows;
    width = augmentation_.has_resize_param() ? augmentation_.resize_param().width() : image.cols;
  } catch (const Error& e) {
    CREMA_LAYER_REQUIRE(false, "record '" << first.key << "' of "
                                          << this->layer_param_.data_param().source() << ": "
                                          << e.what());
  }
  const std::vector<int> shape{batch_size, channels, height, width};
  top[0]->Reshape(shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(shape);
  LOG_IF(INFO, Context::is_rank_zero())
      << "output data size: " << batch_size << "," << channels << "," << height << "," << width;
  if (this->output_labels_) {
    const std::vector<int> label_shape{1, 1, 1, 8};
    top[1]->Reshape(label_shape);
    for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
  }
}

template <typename Dtype>
void AnnotatedDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const TransformationParameter& t = augmentation_;
  const std::vector<int> shape = batch->data_.shape();
  const int item_size = batch->data_.count(1);
  Dtype* data = batch->data_.mutable_cpu_data();
  const std::vector<float> fill(t.mean_value().begin(), t.mean_value().end());
  const auto& samplers = this->layer_param_.annotated_data_param().batch_sampler();
  std::vector<Dtype> rows;  // 8 per box
  this->SeedNextBatch(true);
  this->ForEachRecord(shape[0], [&](int item, const DataRecord& record) {
    CREMA_REQUIRE(record.annotated.type() == AnnotatedDatum::BBOX,
                  "the annotation type is not BBOX");
    cv::Mat image = ssd::DatumImage(record.datum, ColorOf(t), "the record");
    std::vector<ssd::AnnotatedBox> boxes = ssd::BoxesOf(record.annotated);
    if (t.has_distort_param()) ssd::DistortImage(t.distort_param(), &image);
    if (t.has_expand_param()) ssd::ExpandImage(t.expand_param(), fill, &image, &boxes);
    const std::vector<ssd::DetectionBox> windows = ssd::GenerateWindows(boxes, samplers);
    if (!windows.empty()) {
      const ssd::DetectionBox& window = windows[Context::rng()() % windows.size()];
      ssd::CropImage(window, t.emit_constraint(), &image, &boxes);
    }
    if (t.has_resize_param()) ssd::ResizeImage(t.resize_param(), &image, &boxes);
    if (t.mirror() && Context::rng()() % 2) ssd::MirrorImage(&image, &boxes);
    CREMA_REQUIRE(image.channels() == shape[1] && image.rows == shape[2] && image.cols == shape[3],
                  "the image is " << image.channels() << " x " << image.rows << " x " << image.cols
                                  << " where the batch's first was " << shape[1] << " x "
                                  << shape[2] << " x " << shape[3]
                                  << "; give resize_param to bring every image to one size");
    this->data_transformer_->Transform(image, data + item * item_size);
    for (const ssd::AnnotatedBox& box : boxes) {
      rows.insert(rows.end(), {Dtype(item), Dtype(box.group_label), Dtype(box.instance_id),
                               Dtype(box.box.xmin), Dtype(box.box.ymin), Dtype(box.box.xmax),
                               Dtype(box.box.ymax), Dtype(box.difficult ? 1 : 0)});
    }
  });
  if (!this->output_labels_) return;
  if (rows.empty()) rows.assign(8, Dtype(-1));
  batch->label_.Reshape({1, 1, static_cast<int>(rows.size() / 8), 8});
  std::copy(rows.begin(), rows.end(), batch->label_.mutable_cpu_data());
}

#else  // !CREMA_OPENCV

template <typename Dtype>
void AnnotatedDataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                               const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(false,
                      "this build of Crema has no OpenCV, which AnnotatedData needs to "
                      "decode and transform images (install libopencv-dev and rebuild)");
}

// Unreachable: DataLayerSetUp refuses before the prefetch thread starts.
template <typename Dtype>
void AnnotatedDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  LOG(FATAL) << "AnnotatedData loads no batch without OpenCV";
}

#endif  // CREMA_OPENCV

INSTANTIATE_CLASS(AnnotatedDataLayer);
REGISTER_LAYER_CLASS(AnnotatedData);

}  // namespace crema
