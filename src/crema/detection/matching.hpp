// SSD training's bookkeeping (weiliu89/caffe's MultiBoxLoss): which prior
// boxes a ground-truth box is matched to, and which unmatched priors serve
// as negatives. Pure functions of boxes and scores, tested by hand.
#ifndef CREMA_DETECTION_MATCHING_HPP_
#define CREMA_DETECTION_MATCHING_HPP_

#include <string>
#include <vector>

#include "crema/detection/boxes.hpp"

namespace crema {
namespace ssd {

struct GroundTruth {
  int label = 0;
  DetectionBox box;
  bool difficult = false;
};

// The ground truths of each of `num_images` images from an annotated data
// layer's label top: rows of 8 (image, label, instance, xmin, ymin, xmax,
// ymax, difficult); rows whose image is -1 are padding. Difficult boxes are
// dropped unless use_difficult. A row naming an image outside [0,
// num_images), the background label or an inverted box is a user error
// naming `what` and the row.
std::vector<std::vector<GroundTruth>> ReadGroundTruths(const float* rows, int num_rows,
                                                       int num_images, bool use_difficult,
                                                       int background_label,
                                                       const std::string& what);

// For each prior, the ground truth it is matched to (-1: none) and its
// largest Jaccard overlap with any ground truth.
struct PriorMatches {
  std::vector<int> truth;
  std::vector<float> overlap;
  int matched() const;
};

// Bipartite first: repeatedly the (prior, ground truth) pair of largest
// overlap among unmatched priors and unmatched ground truths, until every
// ground truth has a prior or overlaps none left (first index wins ties).
// Then, with per_prediction, each prior still unmatched takes the ground
// truth it overlaps most when that overlap is at least overlap_threshold.
// Priors in `ignored` (cross-boundary ones, when asked) take no part.
PriorMatches MatchPriors(const std::vector<DetectionBox>& priors,
                         const std::vector<GroundTruth>& truths, bool per_prediction,
                         float overlap_threshold, const std::vector<bool>& ignored);

// Hard negative mining (MAX_NEGATIVE): among unmatched priors whose largest
// overlap is below neg_overlap, the min(num_matched * neg_pos_ratio,
// candidates) of largest `background_loss` (the confidence loss were the
// prior background), by descending loss (lower index first among equals).
std::vector<int> MineNegatives(const PriorMatches& matches,
                               const std::vector<float>& background_loss, float neg_pos_ratio,
                               float neg_overlap);

// Hard example mining (HARD_EXAMPLE): ranks every prior by `loss` (its
// confidence loss against its target, plus the localisation loss of a
// matched prior), keeps the sample_size largest, first thinning them by
// greedy NMS over the priors' predicted `boxes` at nms_threshold when that
// is positive (lower index first among equal losses). Matched priors not
// kept lose their match; unmatched priors kept are returned, as negatives.
std::vector<int> MineHardExamples(PriorMatches* matches, const std::vector<float>& loss,
                                  const std::vector<DetectionBox>& boxes, float nms_threshold,
                                  int sample_size);

}  // namespace ssd
}  // namespace crema

#endif  // CREMA_DETECTION_MATCHING_HPP_
