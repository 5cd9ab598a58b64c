// HDF5 files: weights in Caffe's .caffemodel.h5 layout (a group "data", one
// subgroup per layer, datasets "0", "1", ... per parameter blob; "diff" alike)
// and N-D datasets read into blobs (for the HDF5 data layers).
#ifndef CREMA_STORAGE_HDF5_HPP_
#define CREMA_STORAGE_HDF5_HPP_

#include <hdf5.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crema/blob.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {

// Fills the blobs of the layers named in `targets` from the file; layers the
// file lacks keep their values, a shape or count mismatch is a user error
// naming the file, the layer and both shapes; so is a file with no layers.
// Returns the names of the layers filled; `file_layers` gets every layer the
// file holds. The file is read in a child process (libhdf5 can crash on a
// corrupt file): such a crash is an Error naming the file.
template <typename Dtype>
std::vector<std::string> ReadNetParamsFromHDF5(
    const std::string& filename, std::map<std::string, std::vector<Blob<Dtype>*>>* targets,
    std::vector<std::string>* file_layers);

// Writes every layer's blobs (and diffs if asked), atomically.
template <typename Dtype>
void WriteNetParamsToHDF5(
    const std::string& filename,
    const std::vector<std::pair<std::string, std::vector<const Blob<Dtype>*>>>& layers,
    bool write_diff);

// Reads the datasets `names` of a file into `blobs` (one each, reshaped to
// the dataset's shape, between min_dim and max_dim axes); a missing file or
// dataset, another rank or a non-numeric dataset is an error naming the file
// and the dataset. Read in a child process, as the weights are.
template <typename Dtype>
void HDF5LoadDatasets(const std::string& filename, const std::vector<std::string>& names,
                      int min_dim, int max_dim, const std::vector<Blob<Dtype>*>& blobs);

// A solver state as HDF5 (snapshot_format: HDF5): scalar datasets "iter" and
// "current_step", a string dataset "learned_net", a group "history" with one
// dataset per history blob ("0", "1", ...), as Caffe lays it out; Crema's
// resume fields (generator state, reader positions) go in one string dataset
// "crema_resume" holding them as a serialised SolverState. Written atomically.
void WriteSolverStateToHDF5(const std::string& filename, const SolverState& state);
// Reads either layout (with or without "crema_resume"); a missing or
// malformed file is a user error naming it (read in a child process, as the
// weights are).
void ReadSolverStateFromHDF5(const std::string& filename, SolverState* state);

// libhdf5 prints its error stack to stderr on every failure; Crema reports
// the failure itself, so the stack is printed only at verbose level 1
// (GLOG_v=1). Call before using libhdf5 on a thread.
void QuietHdf5Diagnostics();

// An HDF5 file in memory (the core driver, no backing file), for a writer
// that builds its file in steps (HDF5Output), and its bytes once complete:
// libhdf5 never writes to the disk, whose failures (a full disk) it does not
// survive cleanly; the bytes go to WriteFileAtomically. `filename` names the
// file in errors. The caller closes the handle (H5Fclose).
hid_t CreateInMemoryHdf5(const std::string& filename);
std::string InMemoryHdf5Bytes(hid_t file, const std::string& filename);

}  // namespace crema

#endif  // CREMA_STORAGE_HDF5_HPP_
