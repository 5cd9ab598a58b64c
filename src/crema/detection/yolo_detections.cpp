#include "crema/detection/yolo_detections.hpp"

#include <algorithm>
#include <numeric>

namespace crema {
namespace yolo {

namespace {
float AxisOverlap(float centre1, float size1, float centre2, float size2) {
  return std::min(centre1 + size1 / 2, centre2 + size2 / 2) -
         std::max(centre1 - size1 / 2, centre2 - size2 / 2);
}
}  // namespace

float Overlap(const Candidate& a, const Candidate& b) {
  const float across = AxisOverlap(a.x, a.w, b.x, b.w), down = AxisOverlap(a.y, a.h, b.y, b.h);
  if (across < 0 || down < 0) return 0;
  const float intersection = across * down;
  const float united = a.w * a.h + b.w * b.h - intersection;
  return united > 0 ? intersection / united : 0;
}

std::vector<Candidate> Select(std::vector<Candidate> candidates, float nms_threshold) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     return a.image != b.image ? a.image < b.image : a.confidence > b.confidence;
                   });
  std::vector<Candidate> kept;
  size_t image_start = 0;  // where the current image's kept boxes begin
  for (const Candidate& candidate : candidates) {
    if (!kept.empty() && kept.back().image != candidate.image) image_start = kept.size();
    bool suppressed = false;
    for (size_t k = image_start; k < kept.size() && !suppressed; ++k) {
      suppressed = kept[k].image == candidate.image && Overlap(kept[k], candidate) >= nms_threshold;
    }
    if (!suppressed) kept.push_back(candidate);
  }
  return kept;
}

template <typename Dtype>
void WriteRows(const std::vector<Candidate>& kept, int images, Blob<Dtype>* top) {
  if (kept.empty()) {
    top->Reshape({1, 1, images, 7});
    Dtype* rows = top->mutable_cpu_data();
    std::fill(rows, rows + top->count(), Dtype(-1));
    for (int n = 0; n < images; ++n) rows[n * 7] = Dtype(n);
    return;
  }
  top->Reshape({1, 1, static_cast<int>(kept.size()), 7});
  Dtype* row = top->mutable_cpu_data();
  for (const Candidate& c : kept) {
    const Dtype values[7] = {Dtype(c.image),       Dtype(c.label),       Dtype(c.confidence),
                             Dtype(c.x - c.w / 2), Dtype(c.y - c.h / 2), Dtype(c.x + c.w / 2),
                             Dtype(c.y + c.h / 2)};
    std::copy(values, values + 7, row);
    row += 7;
  }
}

template void WriteRows<float>(const std::vector<Candidate>&, int, Blob<float>*);
template void WriteRows<double>(const std::vector<Candidate>&, int, Blob<double>*);

}  // namespace yolo
}  // namespace crema
