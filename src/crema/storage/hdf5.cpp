#include "crema/storage/hdf5.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <type_traits>

#include "crema/common.hpp"
#include "crema/util/io.hpp"
#include "crema/util/isolated.hpp"

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

// An HDF5 file built in memory (the core driver, no backing file) by `fill`,
// returned as its bytes: the writers hand them to WriteFileAtomically, so
// libhdf5 never writes to the disk, and a full disk is one checked write
// there, not a failure inside libhdf5 that leaves it half-closed.
std::string Hdf5Image(const std::string& filename, const std::function<void(hid_t file)>& fill) {
  Handle file(CreateInMemoryHdf5(filename), H5Fclose);
  fill(file.get());
  return InMemoryHdf5Bytes(file.get(), filename);
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

// A dataset read as numbers must hold numbers of a size HDF5 converts: a
// corrupt file's datatype can claim elements of gigabytes, which HDF5 would
// allocate a conversion buffer for.
void RequireNumeric(hid_t dataset, const std::string& where) {
  Handle type(H5Dget_type(dataset), H5Tclose);
  CREMA_REQUIRE(type.ok(), where << ": unreadable datatype");
  const H5T_class_t type_class = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  CREMA_REQUIRE(
      (type_class == H5T_FLOAT || type_class == H5T_INTEGER) && size >= 1 && size <= 16,
      where << ": expected numbers (float or integer elements), the file's datatype is "
            << (type_class == H5T_FLOAT || type_class == H5T_INTEGER ? "numeric" : "not numeric")
            << " with elements of " << size << " bytes");
}

template <typename Dtype>
void ReadInto(hid_t group, const std::string& dataset_name, const std::string& where,
              Blob<Dtype>* blob, bool diff) {
  Handle dataset(H5Dopen2(group, dataset_name.c_str(), H5P_DEFAULT), H5Dclose);
  CREMA_REQUIRE(dataset.ok(), where << ": missing dataset '" << dataset_name << "'");
  const std::vector<hsize_t> dims = DatasetShape(dataset.get());
  std::vector<int> shape(dims.begin(), dims.end());
  CREMA_REQUIRE(shape == blob->shape(),
                where << " dataset '" << dataset_name << "': shape mismatch: the net expects "
                      << blob->shape_string() << ", the file has " << ShapeString(dims));
  RequireNumeric(dataset.get(), where + " dataset '" + dataset_name + "'");
  Dtype* target = diff ? blob->mutable_cpu_diff() : blob->mutable_cpu_data();
  CREMA_REQUIRE(
      H5Dread(dataset.get(), NativeType<Dtype>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, target) >= 0,
      where << " dataset '" << dataset_name << "': read failed");
}

}  // namespace

namespace {
herr_t PrintAtVerboseLevel(hid_t stack, void* /*unused*/) {
  if (VLOG_IS_ON(1)) H5Eprint2(stack, stderr);
  return 0;
}
}  // namespace

hid_t CreateInMemoryHdf5(const std::string& filename) {
  static std::atomic<int> images{0};
  QuietHdf5Diagnostics();
  // A name of its own: libhdf5 refuses a second open file of the same name.
  const std::string name =
      filename + ".in-memory-" + std::to_string(getpid()) + "-" + std::to_string(++images);
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  CREMA_REQUIRE(access.ok() && H5Pset_fapl_core(access.get(), 1 << 20, 0) >= 0,
                filename << ": cannot set up an HDF5 file in memory");
  const hid_t file = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  CREMA_REQUIRE(file >= 0, filename << ": cannot create an HDF5 file in memory");
  return file;
}

std::string InMemoryHdf5Bytes(hid_t file, const std::string& filename) {
  CREMA_REQUIRE(H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0,
                filename << ": cannot complete the HDF5 file in memory");
  const ssize_t size = H5Fget_file_image(file, nullptr, 0);
  CREMA_REQUIRE(size > 0, filename << ": cannot read the HDF5 file back from memory");
  std::string image(static_cast<size_t>(size), '\0');
  CREMA_REQUIRE(H5Fget_file_image(file, image.data(), image.size()) == size,
                filename << ": cannot read the HDF5 file back from memory");
  return image;
}

void QuietHdf5Diagnostics() {
  // The setting may be per thread (a thread-safe libhdf5): set in each.
  thread_local bool quiet = false;
  if (!quiet) {
    H5Eset_auto2(H5E_DEFAULT, PrintAtVerboseLevel, nullptr);
    quiet = true;
  }
}

namespace {
// The names of a group's members (an HDF5 model's layers).
std::vector<std::string> MemberNames(hid_t group) {
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) return {};
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t size =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (size < 0) continue;
    std::string name(static_cast<size_t>(size) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, &name[0], name.size(),
                       H5P_DEFAULT);
    name.resize(static_cast<size_t>(size));
    names.push_back(name);
  }
  return names;
}
}  // namespace

namespace {
// The CPU time a reader child may take on a file: libhdf5 loops on some
// corrupt files. Reading takes well under a second per 100 MiB; the bound is
// 10 s plus 1 s per 16 MiB, far above that and below a fuzzer's timeout.
int ReaderCpuSeconds(const std::string& filename) {
  std::ifstream file(filename, std::ios::binary | std::ios::ate);
  const std::streamoff size = file ? static_cast<std::streamoff>(file.tellg()) : 0;
  return 10 + static_cast<int>(std::min<std::streamoff>(size >> 24, 1 << 20));
}

// libhdf5 can crash or loop on a corrupt file (faults inside it that no
// check made before the call rules out), so every HDF5 file is read in a
// child process (RunIsolated): `read` fills a message there, which comes
// back serialised into *result. `contents` names what is read, for the one
// error of the child's own: a message over protobuf's 2 GiB.
template <typename Message>
void ReadInChild(const std::string& filename, const char* contents,
                 const std::function<void(Message*)>& read, Message* result) {
  QuietHdf5Diagnostics();
  CREMA_REQUIRE(access(filename.c_str(), R_OK) == 0, filename << ": cannot open file");
  const std::string bytes = RunIsolated(filename, ReaderCpuSeconds(filename), [&]() {
    Message message;
    read(&message);
    std::string serialised;
    CREMA_REQUIRE(
        message.SerializeToString(&serialised),
        filename << ": " << contents << " exceed 2 GiB, more than Crema reads from one HDF5 file");
    return serialised;
  });
  CREMA_REQUIRE(result->ParseFromString(bytes), filename << ": the reader's result is garbled");
}

// ReadNetParamsFromHDF5's work, done in this process.
template <typename Dtype>
std::vector<std::string> ReadLayers(const std::string& filename,
                                    std::map<std::string, std::vector<Blob<Dtype>*>>* targets,
                                    std::vector<std::string>* file_layers) {
  Handle file(H5Fopen(filename.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  CREMA_REQUIRE(file.ok(), filename << ": not a readable HDF5 file");
  Handle data(H5Gopen2(file.get(), "data", H5P_DEFAULT), H5Gclose);
  CREMA_REQUIRE(data.ok(), filename << ": no group 'data' (not a Crema/Caffe HDF5 model)");
  *file_layers = MemberNames(data.get());
  CREMA_REQUIRE(!file_layers->empty(),
                filename << ": group 'data' holds no layers; expected trained weights "
                            "(/data/<layer>/<blob index>)");
  std::vector<std::string> copied;
  for (auto& entry : *targets) {
    const std::string& layer_name = entry.first;
    if (H5Lexists(data.get(), layer_name.c_str(), H5P_DEFAULT) <= 0) continue;
    const std::string where = filename + ": layer '" + layer_name + "'";
    Handle layer(H5Gopen2(data.get(), layer_name.c_str(), H5P_DEFAULT), H5Gclose);
    CREMA_REQUIRE(layer.ok(), where << " is not a group of parameter blobs");
    H5G_info_t info;
    CREMA_REQUIRE(H5Gget_info(layer.get(), &info) >= 0, where << ": cannot be read");
    CREMA_REQUIRE(info.nlinks == entry.second.size(),
                  where << " has " << info.nlinks
                        << " parameter blobs in the file, the net expects " << entry.second.size());
    for (size_t i = 0; i < entry.second.size(); ++i) {
      ReadInto(layer.get(), std::to_string(i), where, entry.second[i], false);
    }
    if (!entry.second.empty()) copied.push_back(layer_name);
  }
  return copied;
}
}  // namespace

// Read in a child process (ReadInChild): the child fills its copy of the
// blobs and sends back every layer name of the file, with the blobs of the
// layers it copied.
template <typename Dtype>
std::vector<std::string> ReadNetParamsFromHDF5(
    const std::string& filename, std::map<std::string, std::vector<Blob<Dtype>*>>* targets,
    std::vector<std::string>* file_layers) {
  NetParameter layers;
  ReadInChild<NetParameter>(
      filename, "the weights",
      [&](NetParameter* read) {
        std::vector<std::string> names;
        const std::vector<std::string> copied = ReadLayers(filename, targets, &names);
        for (const std::string& name : names) {
          LayerParameter* layer = read->add_layer();
          layer->set_name(name);
          if (std::find(copied.begin(), copied.end(), name) == copied.end()) continue;
          for (const Blob<Dtype>* blob : targets->at(name)) blob->ToProto(layer->add_blobs());
        }
      },
      &layers);
  file_layers->clear();
  std::vector<std::string> copied;
  for (const LayerParameter& layer : layers.layer()) {
    file_layers->push_back(layer.name());
    if (layer.blobs_size() == 0) continue;
    std::vector<Blob<Dtype>*>& blobs = targets->at(layer.name());
    for (size_t i = 0; i < blobs.size(); ++i)
      blobs[i]->FromProto(layer.blobs(static_cast<int>(i)), false);
    copied.push_back(layer.name());
  }
  return copied;
}

template <typename Dtype>
void WriteNetParamsToHDF5(
    const std::string& filename,
    const std::vector<std::pair<std::string, std::vector<const Blob<Dtype>*>>>& layers,
    bool write_diff) {
  QuietHdf5Diagnostics();
  const std::string image = Hdf5Image(filename, [&](hid_t file) {
    for (const bool diff : {false, true}) {
      if (diff && !write_diff) break;
      Handle group(H5Gcreate2(file, diff ? "diff" : "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose);
      for (const auto& layer : layers) {
        // Split layers are the net's plumbing, never stored (they have no blobs).
        Handle layer_group(
            H5Gcreate2(group.get(), layer.first.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Gclose);
        CREMA_REQUIRE(layer_group.ok(), filename << ": cannot write layer '" << layer.first << "'");
        for (size_t i = 0; i < layer.second.size(); ++i) {
          const Blob<Dtype>* blob = layer.second[i];
          std::vector<hsize_t> dims(blob->shape().begin(), blob->shape().end());
          Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                       H5Sclose);
          Handle dataset(
              H5Dcreate2(layer_group.get(), std::to_string(i).c_str(), NativeType<Dtype>(),
                         space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
          const Dtype* values = diff ? blob->cpu_diff() : blob->cpu_data();
          CREMA_REQUIRE(dataset.ok() && H5Dwrite(dataset.get(), NativeType<Dtype>(), H5S_ALL,
                                                 H5S_ALL, H5P_DEFAULT, values) >= 0,
                        filename << ": cannot write layer '" << layer.first << "' blob " << i);
        }
      }
    }
  });
  WriteFileAtomically(filename, image);
}

namespace {
// Reads dataset `name` of an open file into blob (reshaped to the dataset's
// shape, between min_dim and max_dim axes).
template <typename Dtype>
void LoadDataset(hid_t file, const std::string& filename, const std::string& name, int min_dim,
                 int max_dim, Blob<Dtype>* blob) {
  CREMA_REQUIRE(H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0,
                filename << ": no dataset '" << name << "'");
  Handle dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  CREMA_REQUIRE(dataset.ok(), filename << ": cannot open dataset '" << name << "'");
  const std::vector<hsize_t> dims = DatasetShape(dataset.get());
  const int rank = static_cast<int>(dims.size());
  CREMA_REQUIRE(rank >= min_dim && rank <= max_dim,
                filename << " dataset '" << name << "': " << rank << " axes, expected between "
                         << min_dim << " and " << max_dim);
  RequireNumeric(dataset.get(), filename + " dataset '" + name + "'");
  for (hsize_t d : dims) {
    CREMA_REQUIRE(d <= static_cast<hsize_t>(INT_MAX),
                  filename << " dataset '" << name << "': dimension " << d << " is too large");
  }
  blob->Reshape(std::vector<int>(dims.begin(), dims.end()));
  CREMA_REQUIRE(H5Dread(dataset.get(), NativeType<Dtype>(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                        blob->mutable_cpu_data()) >= 0,
                filename << " dataset '" << name << "': read failed (is it numeric?)");
}
}  // namespace

// Read in a child process (ReadInChild): the child sends the datasets back
// as the BlobProtos of one layer, in order.
template <typename Dtype>
void HDF5LoadDatasets(const std::string& filename, const std::vector<std::string>& names,
                      int min_dim, int max_dim, const std::vector<Blob<Dtype>*>& blobs) {
  NetParameter datasets;
  ReadInChild<NetParameter>(
      filename, "the datasets",
      [&](NetParameter* read) {
        Handle file(H5Fopen(filename.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
        CREMA_REQUIRE(file.ok(), filename << ": not a readable HDF5 file");
        LayerParameter* holder = read->add_layer();
        for (size_t i = 0; i < names.size(); ++i) {
          LoadDataset(file.get(), filename, names[i], min_dim, max_dim, blobs[i]);
          blobs[i]->ToProto(holder->add_blobs());
        }
      },
      &datasets);
  CREMA_REQUIRE(datasets.layer_size() == 1 &&
                    datasets.layer(0).blobs_size() == static_cast<int>(names.size()),
                filename << ": the reader's result is garbled");
  for (size_t i = 0; i < names.size(); ++i) blobs[i]->FromProto(datasets.layer(0).blobs(i));
}

namespace {

void WriteScalar(hid_t file, const char* name, int value, const std::string& where) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle dataset(
      H5Dcreate2(file, name, H5T_NATIVE_INT, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  CREMA_REQUIRE(dataset.ok() && H5Dwrite(dataset.get(), H5T_NATIVE_INT, H5S_ALL, H5S_ALL,
                                         H5P_DEFAULT, &value) >= 0,
                where << ": cannot write '" << name << "'");
}

// A fixed-length byte string (it may hold zero bytes: serialised protobuf).
void WriteString(hid_t file, const char* name, const std::string& value, const std::string& where) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<size_t>(value.size(), 1));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle dataset(
      H5Dcreate2(file, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  std::string padded = value.empty() ? std::string(1, '\0') : value;
  CREMA_REQUIRE(dataset.ok() && H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                         padded.data()) >= 0,
                where << ": cannot write '" << name << "'");
}

int ReadScalar(hid_t file, const char* name, const std::string& where) {
  Handle dataset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  CREMA_REQUIRE(dataset.ok(), where << ": no dataset '" << name << "' (not a solver state?)");
  int value = 0;
  CREMA_REQUIRE(H5Dread(dataset.get(), H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0,
                where << ": cannot read '" << name << "' as an integer");
  return value;
}

std::string ReadString(hid_t file, const char* name, const std::string& where) {
  Handle dataset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  CREMA_REQUIRE(dataset.ok(), where << ": no dataset '" << name << "'");
  Handle type(H5Dget_type(dataset.get()), H5Tclose);
  CREMA_REQUIRE(H5Tget_class(type.get()) == H5T_STRING && !H5Tis_variable_str(type.get()),
                where << ": dataset '" << name << "' is not a fixed-length string");
  // A string longer than the whole file is a corrupt datatype, not a string.
  hsize_t file_size = 0;
  H5Fget_filesize(file, &file_size);
  CREMA_REQUIRE(H5Tget_size(type.get()) <= file_size,
                where << ": dataset '" << name << "' claims a string of " << H5Tget_size(type.get())
                      << " bytes in a file of " << file_size);
  std::string value(H5Tget_size(type.get()), '\0');
  CREMA_REQUIRE(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &value[0]) >= 0,
                where << ": cannot read '" << name << "'");
  // Caffe writes null-terminated strings; a serialised proto keeps its bytes.
  if (H5Tget_strpad(type.get()) == H5T_STR_NULLTERM) value.resize(std::strlen(value.c_str()));
  return value;
}

// Leaves only Crema's fields (10000 and up) of a solver state.
void ClearCaffeFields(SolverState* state) {
  state->clear_iter();
  state->clear_learned_net();
  state->clear_history();
  state->clear_current_step();
}
}  // namespace

void WriteSolverStateToHDF5(const std::string& filename, const SolverState& state) {
  QuietHdf5Diagnostics();
  const std::string image = Hdf5Image(filename, [&](hid_t file) {
    WriteScalar(file, "iter", state.iter(), filename);
    WriteString(file, "learned_net", state.learned_net(), filename);
    WriteScalar(file, "current_step", state.current_step(), filename);
    Handle history(H5Gcreate2(file, "history", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    CREMA_REQUIRE(history.ok(), filename << ": cannot create group 'history'");
    for (int i = 0; i < state.history_size(); ++i) {
      const BlobProto& blob = state.history(i);
      std::vector<hsize_t> dims(blob.shape().dim().begin(), blob.shape().dim().end());
      const bool is_double = blob.double_data_size() > 0;
      const hid_t type = is_double ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
      Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
      Handle dataset(H5Dcreate2(history.get(), std::to_string(i).c_str(), type, space.get(),
                                H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     H5Dclose);
      const void* values = is_double ? static_cast<const void*>(blob.double_data().data())
                                     : static_cast<const void*>(blob.data().data());
      CREMA_REQUIRE(
          dataset.ok() && H5Dwrite(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0,
          filename << ": cannot write history blob " << i);
    }
    // Crema's own fields (the generator, the data layers' positions) ride
    // in one serialised SolverState beside Caffe's layout.
    SolverState resume(state);
    ClearCaffeFields(&resume);
    WriteString(file, "crema_resume", resume.SerializeAsString(), filename);
  });
  WriteFileAtomically(filename, image);
}

namespace {
// ReadSolverStateFromHDF5's work, done in this process.
void ReadSolverState(const std::string& filename, SolverState* state) {
  Handle file(H5Fopen(filename.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  CREMA_REQUIRE(file.ok(), filename << ": not a readable HDF5 file");
  state->Clear();
  state->set_iter(ReadScalar(file.get(), "iter", filename));
  if (H5Lexists(file.get(), "learned_net", H5P_DEFAULT) > 0) {
    state->set_learned_net(ReadString(file.get(), "learned_net", filename));
  }
  if (H5Lexists(file.get(), "current_step", H5P_DEFAULT) > 0) {
    state->set_current_step(ReadScalar(file.get(), "current_step", filename));
  }
  Handle history(H5Gopen2(file.get(), "history", H5P_DEFAULT), H5Gclose);
  CREMA_REQUIRE(history.ok(), filename << ": no group 'history' (not a solver state?)");
  H5G_info_t info;
  H5Gget_info(history.get(), &info);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const std::string name = std::to_string(i);
    Handle dataset(H5Dopen2(history.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    CREMA_REQUIRE(dataset.ok(), filename << ": history blob '" << name << "' is missing");
    const std::vector<hsize_t> dims = DatasetShape(dataset.get());
    BlobProto* blob = state->add_history();
    hsize_t count = 1;
    for (hsize_t d : dims) {
      blob->mutable_shape()->add_dim(static_cast<int64_t>(d));
      CREMA_REQUIRE(
          d == 0 || count <= static_cast<hsize_t>(INT_MAX) / d,
          filename << ": history blob '" << name << "' holds more than " << INT_MAX << " values");
      count *= d;
    }
    RequireNumeric(dataset.get(), filename + ": history blob '" + name + "'");
    Handle type(H5Dget_type(dataset.get()), H5Tclose);
    const bool is_double = H5Tget_class(type.get()) == H5T_FLOAT && H5Tget_size(type.get()) == 8;
    void* target;
    if (is_double) {
      blob->mutable_double_data()->Resize(static_cast<int>(count), 0.0);
      target = blob->mutable_double_data()->mutable_data();
    } else {
      blob->mutable_data()->Resize(static_cast<int>(count), 0.0f);
      target = blob->mutable_data()->mutable_data();
    }
    CREMA_REQUIRE(H5Dread(dataset.get(), is_double ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, H5S_ALL,
                          H5S_ALL, H5P_DEFAULT, target) >= 0,
                  filename << ": cannot read history blob '" << name << "'");
  }
  if (H5Lexists(file.get(), "crema_resume", H5P_DEFAULT) > 0) {
    SolverState resume;
    // An empty string is stored as one NUL (a string type has at least one byte).
    std::string bytes = ReadString(file.get(), "crema_resume", filename);
    if (bytes == std::string(1, '\0')) bytes.clear();
    CREMA_REQUIRE(resume.ParseFromString(bytes),
                  filename << ": dataset 'crema_resume' is not a serialised SolverState");
    ClearCaffeFields(&resume);
    state->MergeFrom(resume);
  }
}
}  // namespace

// Read in a child process (ReadInChild).
void ReadSolverStateFromHDF5(const std::string& filename, SolverState* state) {
  ReadInChild<SolverState>(
      filename, "the solver state", [&](SolverState* read) { ReadSolverState(filename, read); },
      state);
}

#define INSTANTIATE_HDF5(Dtype)                                                                   \
  template std::vector<std::string> ReadNetParamsFromHDF5<Dtype>(                                 \
      const std::string&, std::map<std::string, std::vector<Blob<Dtype>*>>*,                      \
      std::vector<std::string>*);                                                                 \
  template void WriteNetParamsToHDF5<Dtype>(                                                      \
      const std::string&,                                                                         \
      const std::vector<std::pair<std::string, std::vector<const Blob<Dtype>*>>>&, bool);         \
  template void HDF5LoadDatasets<Dtype>(const std::string&, const std::vector<std::string>&, int, \
                                        int, const std::vector<Blob<Dtype>*>&)
INSTANTIATE_HDF5(float);
INSTANTIATE_HDF5(double);

}  // namespace crema
