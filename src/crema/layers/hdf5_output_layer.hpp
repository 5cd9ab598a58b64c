// HDF5Output: writes its two bottoms to datasets "data" and "label" of an
// HDF5 file (hdf5_output_param.file_name), appending each forward's batch as
// new rows, so a whole test pass ends up in one file.
//
// The rows go to a temporary beside the file, each batch written, flushed
// and checked; the temporary becomes the file (fsync, rename) when the layer
// is destroyed (the net with it, at the end of the run), unless it is
// destroyed by an error unwinding the run. Until then, and after any
// failure, the file as it was stays untouched; a failed write is an error
// naming the file and the system's reason, and removes the temporary.
#ifndef CREMA_LAYERS_HDF5_OUTPUT_LAYER_HPP_
#define CREMA_LAYERS_HDF5_OUTPUT_LAYER_HPP_

#include <string>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class HDF5OutputLayer : public Layer<Dtype> {
 public:
  explicit HDF5OutputLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  ~HDF5OutputLayer() override;
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override {}
  const char* type() const override { return "HDF5Output"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 0; }

  // Rows written so far.
  int rows_written() const { return rows_; }
  // Makes the rows written so far the file (the destructor does it too);
  // an error names the file. Later forwards are errors.
  void Publish();

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

 private:
  // Returns false where libhdf5 failed.
  bool Append(const char* name, const Blob<Dtype>& blob);
  // Closes and removes the temporary, then fails naming the file, `step` and
  // the system's reason (errno as libhdf5 left it).
  [[noreturn]] void Fail(const std::string& step, int error);
  std::string file_name_, temporary_;
  long file_id_ = -1;
  bool published_ = false;
  int rows_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_HDF5_OUTPUT_LAYER_HPP_
