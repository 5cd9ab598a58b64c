#include "crema/data/hdf5_data_layer.hpp"

#include <fstream>
#include <numeric>

#include "crema/storage/hdf5.hpp"

namespace crema {

template <typename Dtype>
void HDF5DataLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const HDF5DataParameter& param = this->layer_param_.hdf5_data_param();
  CREMA_LAYER_REQUIRE(param.batch_size() > 0, "batch_size must be positive");
  std::ifstream list(param.source());
  CREMA_LAYER_REQUIRE(list.good(), "cannot open the file list " << param.source());
  std::string line;
  while (std::getline(list, line)) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    const size_t end = line.find_last_not_of(" \t\r");
    files_.push_back(line.substr(start, end - start + 1));
  }
  CREMA_LAYER_REQUIRE(!files_.empty(), "the file list " << param.source() << " names no files");
  row_shapes_.clear();
  file_order_.resize(files_.size());
  std::iota(file_order_.begin(), file_order_.end(), 0u);
  if (param.shuffle()) Shuffle(&file_order_);
  current_file_ = 0;
  LoadFile(files_[file_order_[0]]);
  if (resume_) ApplyResumePosition();
  const int batch = static_cast<int>(param.batch_size());
  for (size_t i = 0; i < top.size(); ++i) {
    std::vector<int> shape = file_blobs_[i]->shape();
    shape[0] = batch;
    top[i]->Reshape(shape);
  }
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::Shuffle(std::vector<unsigned>* order) {
  // Fisher-Yates on the thread's generator, so a seeded run repeats.
  for (size_t i = order->size(); i > 1; --i) {
    std::swap((*order)[i - 1], (*order)[Context::rng()() % i]);
  }
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::LoadFile(const std::string& filename) {
  const int num_tops = this->layer_param_.top_size();
  file_blobs_.resize(num_tops);
  std::vector<std::string> names;
  std::vector<Blob<Dtype>*> blobs;
  for (int i = 0; i < num_tops; ++i) {
    if (!file_blobs_[i]) file_blobs_[i].reset(new Blob<Dtype>());
    names.push_back(this->layer_param_.top(i));
    blobs.push_back(file_blobs_[i].get());
  }
  try {
    HDF5LoadDatasets(filename, names, 1, kMaxBlobAxes, blobs);
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (HDF5Data): " << e.what());
  }
  const int rows = file_blobs_[0]->shape(0);
  for (int i = 1; i < num_tops; ++i) {
    CREMA_LAYER_REQUIRE(file_blobs_[i]->shape(0) == rows,
                        filename << ": dataset '" << this->layer_param_.top(i) << "' has "
                                 << file_blobs_[i]->shape(0) << " rows, '"
                                 << this->layer_param_.top(0) << "' has " << rows);
  }
  CREMA_LAYER_REQUIRE(rows > 0, filename << " holds no rows");
  RequireRowShapes(filename);
  row_order_.resize(rows);
  std::iota(row_order_.begin(), row_order_.end(), 0u);
  if (this->layer_param_.hdf5_data_param().shuffle()) Shuffle(&row_order_);
  current_row_ = 0;
}

// Rows are copied into tops shaped from the first file: a row of another
// shape, even of the same size, would land across the tops' rows.
template <typename Dtype>
void HDF5DataLayer<Dtype>::RequireRowShapes(const std::string& filename) {
  for (size_t i = 0; i < file_blobs_.size(); ++i) {
    const std::vector<int>& shape = file_blobs_[i]->shape();
    const std::vector<int> row_shape(shape.begin() + 1, shape.end());
    if (row_shapes_.size() <= i) row_shapes_.push_back(row_shape);
    CREMA_LAYER_REQUIRE(row_shape == row_shapes_[i],
                        filename << ": dataset '" << this->layer_param_.top(static_cast<int>(i))
                                 << "' has rows of shape " << ShapeString(row_shape)
                                 << ", the first file's have " << ShapeString(row_shapes_[i])
                                 << "; every file's rows must have one shape");
  }
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const int batch = static_cast<int>(this->layer_param_.hdf5_data_param().batch_size());
  for (int item = 0; item < batch; ++item) {
    if (current_row_ == row_order_.size()) {
      // Next file; after the last, start over (reshuffled when asked).
      if (++current_file_ == files_.size()) {
        current_file_ = 0;
        if (this->layer_param_.hdf5_data_param().shuffle()) Shuffle(&file_order_);
      }
      if (files_.size() > 1) {
        LoadFile(files_[file_order_[current_file_]]);
      } else {
        current_row_ = 0;
        if (this->layer_param_.hdf5_data_param().shuffle()) Shuffle(&row_order_);
      }
    }
    for (size_t i = 0; i < top.size(); ++i) {
      const int row_size = file_blobs_[i]->count(1);
      cpu_copy(row_size, file_blobs_[i]->cpu_data() + row_order_[current_row_] * row_size,
               top[i]->mutable_cpu_data() + item * row_size);
    }
    ++current_row_;
  }
}

template <typename Dtype>
std::string HDF5DataLayer<Dtype>::ResumeKey() const {
  return DataSourceKey(this->layer_param_, this->layer_param_.hdf5_data_param().source());
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::AppendResumeState(SolverState* state) const {
  HDF5DataPosition* position = state->add_hdf5_data_position();
  position->set_key(ResumeKey());
  for (unsigned file : file_order_) position->add_file_order(file);
  position->set_current_file(current_file_);
  for (unsigned row : row_order_) position->add_row_order(row);
  position->set_current_row(current_row_);
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::RestoreResumeState(const SolverState& state) {
  const std::string key = ResumeKey();
  for (const HDF5DataPosition& position : state.hdf5_data_position()) {
    if (position.key() == key) resume_.reset(new HDF5DataPosition(position));
  }
}

// Orders must be permutations of what the files hold now: a changed file
// list or file is reported, not read from a wrong place.
template <typename Dtype>
void HDF5DataLayer<Dtype>::ApplyResumePosition() {
  const HDF5DataPosition& saved = *resume_;
  const auto is_permutation = [](const auto& order, size_t size) {
    std::vector<bool> seen(size, false);
    for (unsigned i : order) {
      if (i >= size || seen[i]) return false;
      seen[i] = true;
    }
    return order.size() == static_cast<int>(size);
  };
  CREMA_LAYER_REQUIRE(
      is_permutation(saved.file_order(), files_.size()) && saved.current_file() < files_.size(),
      "the solver state's position does not fit the "
          << files_.size() << " files of " << this->layer_param_.hdf5_data_param().source()
          << " (was the file list changed?)");
  file_order_.assign(saved.file_order().begin(), saved.file_order().end());
  current_file_ = saved.current_file();
  const std::string& file = files_[file_order_[current_file_]];
  LoadFile(file);
  CREMA_LAYER_REQUIRE(is_permutation(saved.row_order(), row_order_.size()) &&
                          saved.current_row() <= row_order_.size(),
                      "the solver state's position does not fit the "
                          << row_order_.size() << " rows of " << file
                          << " (was the file changed?)");
  row_order_.assign(saved.row_order().begin(), saved.row_order().end());
  current_row_ = saved.current_row();
  resume_.reset();
}

INSTANTIATE_CLASS(HDF5DataLayer);
REGISTER_LAYER_CLASS(HDF5Data);

}  // namespace crema
