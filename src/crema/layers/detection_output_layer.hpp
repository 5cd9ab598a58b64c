// DetectionOutput (SSD, weiliu89/caffe): turns the SSD head's predictions
// into detections. Bottoms: loc [N, num_priors * num_loc_classes * 4] (box
// offsets; num_loc_classes is 1 with share_location, num_classes without),
// conf [N, num_priors * num_classes] (scores, e.g. after Softmax), prior
// [1, 2, num_priors * 4] (PriorBox's corners, then variances). Each box is
// decoded from its prior by code_type (no clipping). Then, per image and per
// class other than background_label_id: the boxes scoring above
// confidence_threshold, by descending score (the first nms_param.top_k), go
// through greedy NMS: a box is kept when its Jaccard overlap with every box
// kept before it is at most the threshold; after each kept box, while
// eta < 1 and the threshold is above 0.5, the threshold is multiplied by eta.
// Across classes the keep_top_k highest scores stay (-1: all). The top is
// [1, 1, num_kept, 7] with rows (image, label, score, xmin, ymin, xmax, ymax),
// by image, then label ascending, then score descending. When no image keeps
// a box, the top is [1, 1, N, 7]: one row per image, -1 everywhere but the
// image id (the fork's convention). Forward only.
#ifndef CREMA_LAYERS_DETECTION_OUTPUT_LAYER_HPP_
#define CREMA_LAYERS_DETECTION_OUTPUT_LAYER_HPP_

#include <array>
#include <map>
#include <vector>

#include "crema/detection/boxes.hpp"
#include "crema/layer.hpp"

namespace crema {
template <typename Dtype>
class DetectionOutputLayer : public Layer<Dtype> {
 public:
  explicit DetectionOutputLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "DetectionOutput"; }
  // A 4th bottom (other forks' refined priors) is refused by name in set-up.
  int MinBottomBlobs() const override { return 3; }
  int MaxBottomBlobs() const override { return 4; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // The kept box indices of one image, by label.
  using KeptIndices = std::map<int, std::vector<int>>;

  void ReadNmsParameters();
  void WarnAboutOutputsNotWritten() const;
  // The boxes of image n by loc class (index 0 alone when shared), each
  // decoded when NMS first meets it (the top_k candidates of each class,
  // of thousands of priors); `decoded` says which are.
  struct ImageBoxes {
    std::vector<std::vector<ssd::DetectionBox>> boxes;
    std::vector<std::vector<bool>> decoded;
  };
  void Decode(const Blob<Dtype>& loc, const Blob<Dtype>& prior, int n, int loc_class,
              const std::vector<int>& priors, ImageBoxes* image) const;
  KeptIndices DetectImage(const Blob<Dtype>& loc, const Blob<Dtype>& prior, int n,
                          const std::vector<std::vector<float>>& scores, ImageBoxes* image) const;
  // Keeps the keep_top_k best scores across the labels of one image.
  void KeepTopK(const std::vector<std::vector<float>>& scores, KeptIndices* kept) const;
  std::vector<std::vector<float>> ImageScores(const Blob<Dtype>& conf, int n) const;

  int num_classes_ = 0;
  bool share_location_ = true;
  int num_loc_classes_ = 1;
  int background_label_id_ = 0;
  PriorBoxParameter::CodeType code_type_ = PriorBoxParameter::CORNER;
  bool variance_encoded_in_target_ = false;
  // OpenCV's clip: decoded boxes clamped to [0, 1] before NMS.
  bool clip_ = false;
  int keep_top_k_ = -1;
  float confidence_threshold_ = 0;
  float nms_threshold_ = 0.3f;
  float eta_ = 1;
  int top_k_ = -1;
  int num_priors_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_DETECTION_OUTPUT_LAYER_HPP_
