// HDF5Data: reads the datasets named by its tops from the .h5 files listed
// in a text file (hdf5_data_param.source), one file at a time, batch by
// batch, optionally shuffling file and row order each pass. One instance
// serves every solver thread (ShareInParallel).
#ifndef CREMA_DATA_HDF5_DATA_LAYER_HPP_
#define CREMA_DATA_HDF5_DATA_LAYER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

template <typename Dtype>
class HDF5DataLayer : public Layer<Dtype> {
 public:
  explicit HDF5DataLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override {}
  const char* type() const override { return "HDF5Data"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  bool ShareInParallel() const override { return true; }
  // The file order, the file being read, its row order and the next row.
  void AppendResumeState(SolverState* state) const override;
  void RestoreResumeState(const SolverState& state) override;

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

  // Loads every top's dataset from one file; all must have the same rows.
  void LoadFile(const std::string& filename);
  // Holds each dataset of a file to the first file's row shape (the tops'),
  // naming the file that differs.
  void RequireRowShapes(const std::string& filename);
  void Shuffle(std::vector<unsigned>* order);
  // The key of this layer's entry in a solver state: name, file list, phase.
  std::string ResumeKey() const;
  // Continues where a saved run stood (resume_ from RestoreResumeState).
  void ApplyResumePosition();

  std::vector<std::string> files_;
  std::vector<unsigned> file_order_;
  unsigned current_file_ = 0;
  std::vector<std::unique_ptr<Blob<Dtype>>> file_blobs_;
  // Each dataset's row shape (its shape without axis 0) in the first file.
  std::vector<std::vector<int>> row_shapes_;
  std::vector<unsigned> row_order_;
  unsigned current_row_ = 0;
  std::unique_ptr<HDF5DataPosition> resume_;
};

}  // namespace crema

#endif  // CREMA_DATA_HDF5_DATA_LAYER_HPP_
