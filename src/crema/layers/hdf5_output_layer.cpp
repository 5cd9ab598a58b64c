#include "crema/layers/hdf5_output_layer.hpp"

#include <hdf5.h>

#include <exception>
#include <type_traits>

#include "crema/storage/hdf5.hpp"
#include "crema/util/io.hpp"

namespace crema {

template <typename Dtype>
HDF5OutputLayer<Dtype>::~HDF5OutputLayer() {
  if (file_id_ < 0) return;
  if (std::uncaught_exceptions() > 0) {
    // Destroyed by a failing run: its rows are not a whole pass.
    LOG(WARNING) << file_name_ << ": not written (the run failed); the file as it was is left "
                                  "unchanged";
    Close();
    return;
  }
  try {
    Finish();
  } catch (const Error& error) {
    LOG(ERROR) << error.what();  // a destructor cannot fail
  }
}

template <typename Dtype>
void HDF5OutputLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                        const std::vector<Blob<Dtype>*>& top) {
  file_name_ = this->layer_param_.hdf5_output_param().file_name();
  CREMA_LAYER_REQUIRE(!file_name_.empty(), "hdf5_output_param.file_name is not set");
  const std::string problem = FolderProblem(file_name_);
  CREMA_LAYER_REQUIRE(problem.empty(), file_name_ << ": " << problem);
  Close();
  file_id_ = CreateInMemoryHdf5(file_name_);
  finished_ = false;
  rows_ = 0;
}

template <typename Dtype>
void HDF5OutputLayer<Dtype>::Close() {
  if (file_id_ >= 0) H5Fclose(static_cast<hid_t>(file_id_));
  file_id_ = -1;
}

template <typename Dtype>
void HDF5OutputLayer<Dtype>::Finish() {
  if (file_id_ < 0) return;  // finished already, or never set up
  std::string image;
  try {
    image = InMemoryHdf5Bytes(static_cast<hid_t>(file_id_), file_name_);
  } catch (const Error&) {
    Close();
    throw;
  }
  Close();
  finished_ = true;
  WriteFileAtomically(file_name_, image);
}

// Creates the dataset on first use with an unlimited first axis, then grows
// it by one batch and writes the batch into the new rows.
template <typename Dtype>
bool HDF5OutputLayer<Dtype>::Append(const char* name, const Blob<Dtype>& blob) {
  const hid_t file = static_cast<hid_t>(file_id_);
  const hid_t type = std::is_same<Dtype, float>::value ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  std::vector<hsize_t> dims(blob.shape().begin(), blob.shape().end());
  if (dims.empty()) dims.push_back(1);
  const hsize_t batch = dims[0];
  hid_t dataset;
  if (H5Lexists(file, name, H5P_DEFAULT) > 0) {
    dataset = H5Dopen2(file, name, H5P_DEFAULT);
  } else {
    std::vector<hsize_t> start_dims(dims), max_dims(dims), chunk(dims);
    start_dims[0] = 0;
    max_dims[0] = H5S_UNLIMITED;
    chunk[0] = std::max<hsize_t>(batch, 1);
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), start_dims.data(),
                                         max_dims.data());
    const hid_t properties = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(properties, static_cast<int>(chunk.size()), chunk.data());
    dataset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, properties, H5P_DEFAULT);
    H5Pclose(properties);
    H5Sclose(space);
  }
  if (dataset < 0) return false;
  std::vector<hsize_t> new_dims(dims);
  new_dims[0] = static_cast<hsize_t>(rows_) + batch;
  const bool extended = H5Dset_extent(dataset, new_dims.data()) >= 0;
  const hid_t file_space = H5Dget_space(dataset);
  std::vector<hsize_t> offset(dims.size(), 0);
  offset[0] = static_cast<hsize_t>(rows_);
  H5Sselect_hyperslab(file_space, H5S_SELECT_SET, offset.data(), nullptr, dims.data(), nullptr);
  const hid_t memory_space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const herr_t status = extended ? H5Dwrite(dataset, type, memory_space, file_space, H5P_DEFAULT,
                                            blob.cpu_data())
                                 : -1;
  H5Sclose(memory_space);
  H5Sclose(file_space);
  const bool closed = H5Dclose(dataset) >= 0;
  return status >= 0 && closed;
}

template <typename Dtype>
void HDF5OutputLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                         const std::vector<Blob<Dtype>*>& top) {
  CREMA_LAYER_REQUIRE(bottom[0]->shape(0) == bottom[1]->shape(0),
                      "data has " << bottom[0]->shape(0) << " rows, label "
                                  << bottom[1]->shape(0));
  CREMA_LAYER_REQUIRE(file_id_ >= 0, file_name_ << ": "
                                                << (finished_ ? "the file was already written"
                                                              : "an earlier write failed"));
  if (!Append("data", *bottom[0]) || !Append("label", *bottom[1])) {
    Close();
    CREMA_LAYER_REQUIRE(false, file_name_ << ": cannot add rows to the HDF5 file in memory (out "
                                             "of memory?)");
  }
  rows_ += bottom[0]->shape(0);
}

INSTANTIATE_CLASS(HDF5OutputLayer);
REGISTER_LAYER_CLASS(HDF5Output);

}  // namespace crema
