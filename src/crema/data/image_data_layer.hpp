// ImageData: reads images named by a list file (`path label` per line, the
// label after the last space), relative to root_folder, resized to
// new_height x new_width when given, colour or grey (is_color), optionally
// shuffled every pass; transforms them and serves batches prefetched on its
// own thread. The images of a batch are decoded and transformed by
// decode_threads threads together, each image with its own random draws
// (seeded by the layer's seed and the image's place in the stream), so a
// batch's contents do not depend on the number of threads. One instance
// serves every solver of a data-parallel run (ShareInParallel), so the
// solvers read disjoint batches. Builds with OpenCV only.
#ifndef CREMA_DATA_IMAGE_DATA_LAYER_HPP_
#define CREMA_DATA_IMAGE_DATA_LAYER_HPP_

#ifdef CREMA_OPENCV

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crema/layers/base_data_layer.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {

template <typename Dtype>
class ImageDataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  explicit ImageDataLayer(const LayerParameter& param) : BasePrefetchingDataLayer<Dtype>(param) {}
  ~ImageDataLayer() override;
  void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "ImageData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 2; }
  bool ShareInParallel() const override { return true; }

  // The pass over the list, its next line, the batches served and the seed.
  void AppendResumeState(SolverState* state) const override;
  void RestoreResumeState(const SolverState& state) override;

  // The threads decoding a batch (the prefetch thread included).
  int decode_threads() const { return decode_threads_; }

 protected:
  void load_batch(Batch<Dtype>* batch) override;

 private:
  struct Line {
    std::string file;
    int label;
    int number;  // in the list file, from 1, for errors
  };
  // Where the stream stands: the pass and the next line of its order.
  struct Position {
    uint64_t epoch = 0;
    uint64_t line = 0;
  };

  void ReadList();
  // The order of the lines in pass `epoch` (shuffled from the seed if asked).
  std::vector<int> OrderFor(uint64_t epoch) const;
  // Moves `position` on by one line, to the next pass at the end.
  void Advance(Position* position);
  // Decodes and transforms one image into out, an item of a batch of
  // `shape`; item is its place in the whole stream (seeds its random
  // transformation).
  void LoadImage(const Line& line, uint64_t item, Dtype* out, const std::vector<int>& shape);
  std::string ResumeKey() const;
  int ChooseDecodeThreads() const;

  std::vector<Line> lines_;
  // The stream: where it started (set-up, or the resumed position) and the
  // batches served before; the next line to load (prefetch thread only).
  Position start_;
  uint64_t start_batches_ = 0;
  Position next_;
  uint64_t batches_loaded_ = 0;
  std::vector<int> order_;  // of pass order_epoch_
  uint64_t order_epoch_ = 0;
  uint64_t seed_ = 0;
  std::unique_ptr<ImageDataPosition> resume_;
  int decode_threads_ = 1;
  std::unique_ptr<ThreadPool> decode_pool_;
};

}  // namespace crema

#endif  // CREMA_OPENCV
#endif  // CREMA_DATA_IMAGE_DATA_LAYER_HPP_
