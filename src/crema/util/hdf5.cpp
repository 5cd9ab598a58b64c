#include "crema/util/hdf5.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <cstdio>
#include <type_traits>

#include "crema/common.hpp"

namespace crema {

namespace {

// Closes an HDF5 handle when it goes out of scope.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
  DISABLE_COPY_AND_ASSIGN(Handle);
};

// HDF5 prints its own error stack to stderr; Crema reports errors itself.
void SilenceHdf5() {
  static bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
}

template <typename Dtype>
hid_t NativeType() {
  return std::is_same<Dtype, float>::value ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}

std::string ShapeString(const std::vector<hsize_t>& dims) {
  std::string text;
  for (hsize_t d : dims) text += std::to_string(d) + " ";
  return text;
}

std::vector<hsize_t> DatasetShape(hid_t dataset) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(rank > 0 ? rank : 0);
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

template <typename Dtype>
void ReadInto(hid_t group, const std::string& dataset_name, const std::string& where,
              Blob<Dtype>* blob, bool diff) {
  Handle dataset(H5Dopen2(group, dataset_name.c_str(), H5P_DEFAULT), H5Dclose);
  CREMA_REQUIRE(dataset.ok(), where << ": missing dataset '" << dataset_name << "'");
  const std::vector<hsize_t> dims = DatasetShape(dataset.get());
  std::vector<int> shape(dims.begin(), dims.end());
  CREMA_REQUIRE(shape == blob->shape(), where << " dataset '" << dataset_name
                                              << "': shape mismatch: the net expects "
                                              << blob->shape_string() << ", the file has "
                                              << ShapeString(dims));
  Dtype* target = diff ? blob->mutable_cpu_diff() : blob->mutable_cpu_data();
  CREMA_REQUIRE(H5Dread(dataset.get(), NativeType<Dtype>(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                        target) >= 0,
                where << " dataset '" << dataset_name << "': read failed");
}

}  // namespace

template <typename Dtype>
void ReadNetParamsFromHDF5(const std::string& filename,
                           std::map<std::string, std::vector<Blob<Dtype>*>>* targets) {
  SilenceHdf5();
  CREMA_REQUIRE(access(filename.c_str(), R_OK) == 0, filename << ": cannot open file");
  Handle file(H5Fopen(filename.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  CREMA_REQUIRE(file.ok(), filename << ": not a readable HDF5 file");
  Handle data(H5Gopen2(file.get(), "data", H5P_DEFAULT), H5Gclose);
  CREMA_REQUIRE(data.ok(), filename << ": no group 'data' (not a Crema/Caffe HDF5 model)");
  for (auto& entry : *targets) {
    const std::string& layer_name = entry.first;
    if (H5Lexists(data.get(), layer_name.c_str(), H5P_DEFAULT) <= 0) continue;
    Handle layer(H5Gopen2(data.get(), layer_name.c_str(), H5P_DEFAULT), H5Gclose);
    H5G_info_t info;
    H5Gget_info(layer.get(), &info);
    const std::string where = filename + ": layer '" + layer_name + "'";
    CREMA_REQUIRE(info.nlinks == entry.second.size(),
                  where << " has " << info.nlinks << " parameter blobs in the file, the net expects "
                        << entry.second.size());
    for (size_t i = 0; i < entry.second.size(); ++i) {
      ReadInto(layer.get(), std::to_string(i), where, entry.second[i], false);
    }
  }
}

template <typename Dtype>
void WriteNetParamsToHDF5(
    const std::string& filename,
    const std::vector<std::pair<std::string, std::vector<const Blob<Dtype>*>>>& layers,
    bool write_diff) {
  SilenceHdf5();
  const std::string temporary = filename + ".tmp-" + std::to_string(getpid());
  {
    Handle file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    CREMA_REQUIRE(file.ok(), temporary << ": cannot create HDF5 file");
    for (const bool diff : {false, true}) {
      if (diff && !write_diff) break;
      Handle group(H5Gcreate2(file.get(), diff ? "diff" : "data", H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
                   H5Gclose);
      for (const auto& layer : layers) {
        // Split layers are the net's plumbing, never stored (they have no blobs).
        Handle layer_group(H5Gcreate2(group.get(), layer.first.c_str(), H5P_DEFAULT, H5P_DEFAULT,
                                      H5P_DEFAULT),
                           H5Gclose);
        CREMA_REQUIRE(layer_group.ok(), temporary << ": cannot write layer '" << layer.first << "'");
        for (size_t i = 0; i < layer.second.size(); ++i) {
          const Blob<Dtype>* blob = layer.second[i];
          std::vector<hsize_t> dims(blob->shape().begin(), blob->shape().end());
          Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                       H5Sclose);
          Handle dataset(H5Dcreate2(layer_group.get(), std::to_string(i).c_str(),
                                    NativeType<Dtype>(), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT),
                         H5Dclose);
          const Dtype* values = diff ? blob->cpu_diff() : blob->cpu_data();
          CREMA_REQUIRE(dataset.ok() && H5Dwrite(dataset.get(), NativeType<Dtype>(), H5S_ALL,
                                                 H5S_ALL, H5P_DEFAULT, values) >= 0,
                        temporary << ": cannot write layer '" << layer.first << "' blob " << i);
        }
      }
    }
    H5Fflush(file.get(), H5F_SCOPE_GLOBAL);
  }
  if (std::rename(temporary.c_str(), filename.c_str()) != 0) {
    std::remove(temporary.c_str());
    CREMA_FAIL(filename << ": cannot write file");
  }
}

template <typename Dtype>
void HDF5LoadDataset(long file_id, const std::string& filename, const std::string& name,
                     int min_dim, int max_dim, Blob<Dtype>* blob) {
  SilenceHdf5();
  const hid_t file = static_cast<hid_t>(file_id);
  CREMA_REQUIRE(H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0,
                filename << ": no dataset '" << name << "'");
  Handle dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  CREMA_REQUIRE(dataset.ok(), filename << ": cannot open dataset '" << name << "'");
  const std::vector<hsize_t> dims = DatasetShape(dataset.get());
  const int rank = static_cast<int>(dims.size());
  CREMA_REQUIRE(rank >= min_dim && rank <= max_dim,
                filename << " dataset '" << name << "': " << rank << " axes, expected between "
                         << min_dim << " and " << max_dim);
  blob->Reshape(std::vector<int>(dims.begin(), dims.end()));
  CREMA_REQUIRE(H5Dread(dataset.get(), NativeType<Dtype>(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                        blob->mutable_cpu_data()) >= 0,
                filename << " dataset '" << name << "': read failed (is it numeric?)");
}

#define INSTANTIATE_HDF5(Dtype)                                                                \
  template void ReadNetParamsFromHDF5<Dtype>(const std::string&,                               \
                                             std::map<std::string, std::vector<Blob<Dtype>*>>*); \
  template void WriteNetParamsToHDF5<Dtype>(                                                   \
      const std::string&,                                                                      \
      const std::vector<std::pair<std::string, std::vector<const Blob<Dtype>*>>>&, bool);      \
  template void HDF5LoadDataset<Dtype>(long, const std::string&, const std::string&, int, int, \
                                       Blob<Dtype>*)
INSTANTIATE_HDF5(float);
INSTANTIATE_HDF5(double);

}  // namespace crema
