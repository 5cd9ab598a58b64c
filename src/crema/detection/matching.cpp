#include "crema/detection/matching.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "crema/common.hpp"

namespace crema {
namespace ssd {

std::vector<std::vector<GroundTruth>> ReadGroundTruths(const float* rows, int num_rows,
                                                       int num_images, bool use_difficult,
                                                       int background_label,
                                                       const std::string& what) {
  std::vector<std::vector<GroundTruth>> truths(num_images);
  for (int r = 0; r < num_rows; ++r) {
    const float* row = rows + 8 * r;
    if (row[0] == -1) continue;  // padding
    CREMA_REQUIRE(row[0] >= 0 && row[0] < num_images && row[0] == std::floor(row[0]),
                  what << ": ground-truth row " << r << " names image " << row[0]
                       << "; the batch has images 0 to " << num_images - 1);
    GroundTruth truth;
    truth.label = static_cast<int>(row[1]);
    CREMA_REQUIRE(row[1] == truth.label && truth.label >= 0 && truth.label != background_label,
                  what << ": ground-truth row " << r << " has label " << row[1]
                       << "; labels are whole numbers other than the background ("
                       << background_label << ")");
    truth.box = {row[3], row[4], row[5], row[6]};
    CREMA_REQUIRE(truth.box.xmin <= truth.box.xmax && truth.box.ymin <= truth.box.ymax,
                  what << ": ground-truth row " << r << " has an inverted box (" << row[3] << ", "
                       << row[4] << ", " << row[5] << ", " << row[6] << ")");
    truth.difficult = row[7] != 0;
    if (truth.difficult && !use_difficult) continue;
    truths[static_cast<int>(row[0])].push_back(truth);
  }
  return truths;
}

int PriorMatches::matched() const {
  return static_cast<int>(std::count_if(truth.begin(), truth.end(), [](int t) { return t >= 0; }));
}

PriorMatches MatchPriors(const std::vector<DetectionBox>& priors,
                         const std::vector<GroundTruth>& truths, bool per_prediction,
                         float overlap_threshold, const std::vector<bool>& ignored) {
  const size_t num_priors = priors.size(), num_truths = truths.size();
  PriorMatches matches;
  matches.truth.assign(num_priors, -1);
  matches.overlap.assign(num_priors, 0.f);
  std::vector<float> overlaps(num_priors * num_truths, 0.f);
  for (size_t p = 0; p < num_priors; ++p) {
    if (ignored[p]) continue;
    for (size_t t = 0; t < num_truths; ++t) {
      const float overlap = JaccardOverlap(priors[p], truths[t].box);
      overlaps[p * num_truths + t] = overlap;
      matches.overlap[p] = std::max(matches.overlap[p], overlap);
    }
  }
  std::vector<bool> truth_taken(num_truths, false);
  for (size_t round = 0; round < num_truths; ++round) {
    float best = 0;
    int best_prior = -1, best_truth = -1;
    for (size_t p = 0; p < num_priors; ++p) {
      if (matches.truth[p] >= 0 || ignored[p]) continue;
      for (size_t t = 0; t < num_truths; ++t) {
        if (!truth_taken[t] && overlaps[p * num_truths + t] > best) {
          best = overlaps[p * num_truths + t];
          best_prior = static_cast<int>(p);
          best_truth = static_cast<int>(t);
        }
      }
    }
    if (best_prior < 0) break;  // the ground truths left overlap no free prior
    matches.truth[best_prior] = best_truth;
    truth_taken[best_truth] = true;
  }
  if (!per_prediction) return matches;
  for (size_t p = 0; p < num_priors; ++p) {
    if (matches.truth[p] >= 0 || ignored[p]) continue;
    float best = 0;
    int best_truth = -1;
    for (size_t t = 0; t < num_truths; ++t) {
      const float overlap = overlaps[p * num_truths + t];
      if (overlap >= overlap_threshold && overlap > best) {
        best = overlap;
        best_truth = static_cast<int>(t);
      }
    }
    matches.truth[p] = best_truth;
  }
  return matches;
}

std::vector<int> MineNegatives(const PriorMatches& matches,
                               const std::vector<float>& background_loss, float neg_pos_ratio,
                               float neg_overlap) {
  std::vector<std::pair<float, int>> candidates;
  for (size_t p = 0; p < matches.truth.size(); ++p) {
    if (matches.truth[p] < 0 && matches.overlap[p] < neg_overlap) {
      candidates.emplace_back(background_loss[p], static_cast<int>(p));
    }
  }
  const size_t wanted = static_cast<size_t>(matches.matched() * neg_pos_ratio);
  const size_t count = std::min(wanted, candidates.size());
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const std::pair<float, int>& a, const std::pair<float, int>& b) {
                     return a.first > b.first;
                   });
  std::vector<int> negatives;
  for (size_t i = 0; i < count; ++i) negatives.push_back(candidates[i].second);
  return negatives;
}

std::vector<int> MineHardExamples(PriorMatches* matches, const std::vector<float>& loss,
                                  const std::vector<DetectionBox>& boxes, float nms_threshold,
                                  int sample_size) {
  std::vector<int> ranked(loss.size());
  std::iota(ranked.begin(), ranked.end(), 0);
  std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) { return loss[a] > loss[b]; });
  std::vector<int> kept;
  for (int p : ranked) {
    if (static_cast<int>(kept.size()) >= sample_size) break;
    const bool suppressed = nms_threshold > 0 && std::any_of(kept.begin(), kept.end(), [&](int q) {
                              return JaccardOverlap(boxes[p], boxes[q]) > nms_threshold;
                            });
    if (!suppressed) kept.push_back(p);
  }
  std::vector<bool> selected(loss.size(), false);
  for (int p : kept) selected[p] = true;
  std::vector<int> negatives;
  for (size_t p = 0; p < loss.size(); ++p) {
    if (matches->truth[p] >= 0 && !selected[p]) matches->truth[p] = -1;
    if (matches->truth[p] < 0 && selected[p]) negatives.push_back(static_cast<int>(p));
  }
  return negatives;
}

}  // namespace ssd
}  // namespace crema
