// DenseImageData (SegNet, alexgkendall/caffe-segnet): images and their
// per-pixel label images, named in pairs by a list file (`image label_image`
// per line, relative to root_folder), for segmentation training. Each image
// is read in colour or grey (is_color), each label image in grey, both
// resized to new_height x new_width when given (the image bilinearly, the
// labels by nearest neighbour, so no label is invented); then, as SegNet
// does, mirrored together at random (mirror) and cropped together at a
// random place (crop_height x crop_width). The image goes through the
// transform_param (scale, mean); the labels are the label image's values
// times transform_param.scale, as in SegNet (1 unless set). Tops: data
// [N, C, H, W] and label [N, 1, H, W]. Lines are read in order, shuffled
// every pass with shuffle. Each item's random draws depend on its place in
// the stream only. transform_param's own crop and mirror are refused: they
// would move the image and not its labels. Builds with OpenCV only.
#ifndef CREMA_DATA_DENSE_IMAGE_DATA_LAYER_HPP_
#define CREMA_DATA_DENSE_IMAGE_DATA_LAYER_HPP_

#ifdef CREMA_OPENCV

#include <opencv2/core/core.hpp>
#include <string>
#include <vector>

#include "crema/layers/base_data_layer.hpp"

namespace crema {

template <typename Dtype>
class DenseImageDataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  explicit DenseImageDataLayer(const LayerParameter& param)
      : BasePrefetchingDataLayer<Dtype>(param) {}
  ~DenseImageDataLayer() override;
  void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "DenseImageData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 2; }

 protected:
  void load_batch(Batch<Dtype>* batch) override;

 private:
  struct Line {
    std::string image;
    std::string labels;
    int number;  // in the list file, from 1, for errors
  };
  // An image and its labels, read, resized, mirrored and cropped together.
  struct Pair {
    cv::Mat image;
    cv::Mat labels;
  };

  void CheckSettings() const;
  void ReadList();
  // Reads line's pair and applies the joint mirror and crop drawn from rng
  // (the item's own generator); with no rng, neither (the pair as read).
  Pair LoadPair(const Line& line, RNG* rng) const;
  // One item of a batch: the image through the transformer into data, the
  // labels times scale into labels; both must have the batch's shape.
  void FillItem(const Line& line, const Pair& pair, const std::vector<int>& shape, Dtype* data,
                Dtype* labels) const;
  // The line of the stream's next item (prefetch thread only).
  const Line& NextLine();

  std::vector<Line> lines_;
  PassWalk walk_;  // over lines_
  uint64_t items_loaded_ = 0;
  uint64_t seed_ = 0;
};

}  // namespace crema

#endif  // CREMA_OPENCV
#endif  // CREMA_DATA_DENSE_IMAGE_DATA_LAYER_HPP_
