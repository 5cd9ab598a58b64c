// WindowData: Caffe's R-CNN window data layer. A window file lists images and
// windows (boxes) in them with a class and an overlap with the ground truth:
// windows overlapping at least fg_threshold are foreground (their class), below
// bg_threshold background (class 0), and the rest are not used. Each batch
// draws, uniformly at random, its background windows first and then
// int(batch_size * fg_fraction) foreground ones; each window is cut out (warp:
// the box; square: the box's enclosing square; either widened by context_pad
// output pixels of context, zeros where that leaves the image), warped to
// crop_size x crop_size, mirrored at random, and written as
// (pixel - mean) * scale. Tops: data [batch, channels, crop, crop] and label
// [batch]. Batches are prefetched on the layer's own thread; batch k's draws
// come from the layer's seed and k alone. Builds with OpenCV only.
#ifndef CREMA_DATA_WINDOW_DATA_LAYER_HPP_
#define CREMA_DATA_WINDOW_DATA_LAYER_HPP_

#ifdef CREMA_OPENCV

#include <string>
#include <vector>

#include "crema/layers/base_data_layer.hpp"

namespace crema {

template <typename Dtype>
class WindowDataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  explicit WindowDataLayer(const LayerParameter& param) : BasePrefetchingDataLayer<Dtype>(param) {}
  ~WindowDataLayer() override;
  void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "WindowData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 2; }

  size_t foreground_windows() const { return fg_windows_.size(); }
  size_t background_windows() const { return bg_windows_.size(); }

 protected:
  void load_batch(Batch<Dtype>* batch) override;

 private:
  // One image block of the window file; `line` is where the block starts.
  struct WindowImage {
    std::string path;
    int height = 0;
    int width = 0;
    int line = 0;
  };
  // A window: its image, its class (0: background), its corners (inclusive
  // pixel coordinates, from 0) and its line in the window file.
  struct Window {
    int image = 0;
    int label = 0;
    int x1 = 0, y1 = 0, x2 = 0, y2 = 0;
    int line = 0;
  };
  // A window drawn for one item of a batch.
  struct Draw {
    const Window* window;
    bool mirror;
  };

  // The window file's words, one at a time, each knowing its line.
  class WordReader;

  void ReadWindowFile();
  void ReadImageBlock(WordReader* words);
  void ReadWindow(WordReader* words, int image);
  // crop_size, mirror, scale and mean_file from transform_param or window_data_param.
  void ResolveTransform();
  void LoadMean();
  void CheckImages();
  void RequireWindowsForFraction(int batch_size) const;
  // Refuses a window that warps to no pixel, naming its line.
  void CheckWarps() const;
  void LogSummary(int batch_size) const;
  // This batch's windows: background first, then foreground (Caffe's order).
  std::vector<Draw> DrawWindows(int batch_size) const;
  // Warps one drawn window into `out` (channels x crop x crop, zeroed).
  void LoadItem(const Draw& draw, Dtype* out) const;
  std::string Where(int line) const;

  std::vector<WindowImage> images_;
  std::vector<Window> fg_windows_;
  std::vector<Window> bg_windows_;
  int dropped_windows_ = 0;  // overlap between bg_threshold and fg_threshold
  int channels_ = 0;
  // cache_images: each image file's bytes, still encoded (as Caffe keeps them).
  std::vector<Datum> image_cache_;

  int crop_size_ = 0;
  bool mirror_ = false;
  Dtype scale_ = 1;
  std::string mean_file_;
  Blob<Dtype> mean_;                // from mean_file_, or empty
  std::vector<Dtype> mean_values_;  // one per channel, or empty

  uint64_t seed_ = 0;
  uint64_t batches_loaded_ = 0;  // on the prefetch thread only
};

}  // namespace crema

#endif  // CREMA_OPENCV
#endif  // CREMA_DATA_WINDOW_DATA_LAYER_HPP_
