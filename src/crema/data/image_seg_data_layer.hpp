// ImageSegData (DeepLab v2; PSPNet keeps DeepLab's): images and their
// segmentation labels for training and testing segmentation nets, named by a
// list file relative to image_data_param.root_folder. What a line's second
// column is follows image_data_param.label_type: PIXEL, a label image (read
// in grey, its values the classes); IMAGE (the fork's default), one class
// number for every pixel of the image; NONE, no column, every label
// ignore_label. Images are read in colour or grey (is_color) and resized to
// new_height x new_width when given (the image bilinearly; the label image by
// nearest neighbour, where the fork interpolates class numbers bilinearly).
//
// Each item, as the fork's TransformImgAndSeg does it, the random draws in
// its order: a mirror draw (transform_param.mirror, in either phase), a
// scale drawn from transform_param.scale_factors (image bilinear, labels
// nearest, each side truncated: int(side * factor)), padding at the bottom
// and right up to the crop (the image with the mean, the labels with
// ignore_label), then the crop (crop_size, or crop_height x crop_width: a
// random place in TRAIN, the centre in TEST) and the mirror. The image comes
// out as (pixel - mean_value[c]) * scale, so padding is 0; the labels as
// they are. Tops: data [N, C, H, W], label [N, 1, H, W] and, when asked for,
// data_dim [N, 1, 1, 2]: each image's height and width as read (before the
// scale), at most the batch's. Lines are read in order, shuffled every pass
// with image_data_param.shuffle; each item's draws depend on its place in
// the stream only. Refused, naming the layer: mean_file (as in the fork),
// crop_size with crop_height or crop_width, one of those two alone, other
// random transformations, mean_value counts other than 1 or C, scale factors
// not positive and finite, ignore_label or IMAGE labels outside 0..255
// (labels are 8-bit, as in the fork), a label image of another size than its
// image, and, without a crop, items whose size differs from the first's.
// Builds with OpenCV only.
#ifndef CREMA_DATA_IMAGE_SEG_DATA_LAYER_HPP_
#define CREMA_DATA_IMAGE_SEG_DATA_LAYER_HPP_

#ifdef CREMA_OPENCV

#include <opencv2/core/core.hpp>
#include <string>
#include <vector>

#include "crema/layers/base_data_layer.hpp"

namespace crema {

template <typename Dtype>
class ImageSegDataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  // Keeps the crop, mirror, scale factors and mean for itself: they move the
  // labels with the image, which the shared transformer would not.
  explicit ImageSegDataLayer(const LayerParameter& param);
  ~ImageSegDataLayer() override;
  void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "ImageSegData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 3; }

 protected:
  void load_batch(Batch<Dtype>* batch) override;

 private:
  struct Line {
    std::string image;
    std::string labels;  // PIXEL: the label image's path
    int label = 0;       // IMAGE: the class of every pixel
    int number = 0;      // in the list file, from 1, for errors
  };
  // An image and its labels as read, before the random steps.
  struct Pair {
    cv::Mat image;
    cv::Mat labels;
  };

  void CheckSettings() const;
  void ReadList();
  Pair LoadPair(const Line& line) const;
  // The scale, pad, crop and mirror, with this item's draws from rng, into
  // one item of the batch (data: C x H x W, labels: H x W).
  void FillItem(const Line& line, Pair pair, RNG* rng, const std::vector<int>& shape, Dtype* data,
                Dtype* labels) const;
  // The line of the stream's next item (prefetch thread only).
  const Line& NextLine();

  TransformationParameter own_;  // the transform_param this layer applies
  std::vector<Dtype> mean_;      // one per channel (zeros without mean_value)
  int crop_height_ = 0, crop_width_ = 0;
  std::vector<Line> lines_;
  PassWalk walk_;  // over lines_
  uint64_t items_loaded_ = 0;
  uint64_t seed_ = 0;
};

}  // namespace crema

#endif  // CREMA_OPENCV
#endif  // CREMA_DATA_IMAGE_SEG_DATA_LAYER_HPP_
