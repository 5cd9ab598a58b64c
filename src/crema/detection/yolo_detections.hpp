// What the YOLO forks' detection-output layers (YoloDetectionOutput,
// Yolov3DetectionOutput) share after decoding: one list of candidate boxes,
// best first, thinned by class-agnostic greedy NMS on centre-size boxes, and
// written as DetectionOutput's rows.
#ifndef CREMA_DETECTION_YOLO_DETECTIONS_HPP_
#define CREMA_DETECTION_YOLO_DETECTIONS_HPP_

#include <cmath>
#include <vector>

#include "crema/blob.hpp"

namespace crema {
namespace yolo {

// A decoded box: centre (x, y) and size (w, h) as fractions of the image.
struct Candidate {
  int image = 0;
  int label = 0;  // the class + 1, as the forks write it
  float confidence = 0;
  float x = 0, y = 0, w = 0, h = 0;
};

inline float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// The forks' overlap of two centre-size boxes (no +1, no clipping); 0 where
// they do not meet or their union is empty.
float Overlap(const Candidate& a, const Candidate& b);

// Per image, candidates by descending confidence (ties in decoding order),
// each kept unless an overlap with a kept one of its image reaches
// nms_threshold, whatever the classes (the forks' NMS ignores them).
std::vector<Candidate> Select(std::vector<Candidate> candidates, float nms_threshold);

// top = [1, 1, K, 7], rows (image, label, confidence, xmin, ymin, xmax,
// ymax), images in order, each best first; with nothing kept, the forks'
// [1, 1, images, 7] of -1 with each row's image index first.
template <typename Dtype>
void WriteRows(const std::vector<Candidate>& kept, int images, Blob<Dtype>* top);

}  // namespace yolo
}  // namespace crema

#endif  // CREMA_DETECTION_YOLO_DETECTIONS_HPP_
