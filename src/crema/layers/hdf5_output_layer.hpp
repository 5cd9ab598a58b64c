// HDF5Output: writes its two bottoms to datasets "data" and "label" of an
// HDF5 file (hdf5_output_param.file_name), appending each forward's batch as
// new rows, so a whole test pass ends up in one file.
//
// The rows are held in an HDF5 file in memory (as large as the file will
// be) and written by the safe-write rule when the run ends (Finish, which
// the tools call; else the destructor, which can only log a failure): a full
// disk is an error naming the file and the reason, and the file as it was
// stays untouched, as it does when the run fails or is killed. The folder is
// checked at set-up.
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
  // Writes the file; later forwards are errors.
  void Finish() override;

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

 private:
  // Returns false where libhdf5 failed.
  bool Append(const char* name, const Blob<Dtype>& blob);
  void Close();
  std::string file_name_;
  long file_id_ = -1;
  bool finished_ = false;
  int rows_ = 0;
};

}  // namespace crema

#endif  // CREMA_LAYERS_HDF5_OUTPUT_LAYER_HPP_
