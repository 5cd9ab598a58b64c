// Blob, the layers of a net and Net, with pycaffe's names. A blob's data and
// diff are numpy arrays over the blob's own host memory (no copy): writing
// them changes the net, and each access sees the blob's current shape.
#include "crema/net.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "crema/layers/memory_data_layer.hpp"
#include "crema/python_layer/python_layer.hpp"
#include "crema/util/io.hpp"

namespace py = pybind11;

namespace crema {
namespace python {
namespace {

using BlobF = Blob<float>;
using NetF = Net<float>;
using LayerF = Layer<float>;

// What a numpy view of a blob holds on to: the Python Blob object, and the
// memory the view points into, which stays alive with the view even after a
// reshape gives the blob new memory (writes through an old view then change
// nothing the blob holds). The memory is exposed while the view lives: its
// contents count as changed at every look (SyncedMemory::stamp), since the
// view may write at any time.
struct ViewKeeper {
  ViewKeeper(py::object blob, std::shared_ptr<SyncedMemory> memory)
      : blob(std::move(blob)), memory(std::move(memory)) {
    this->memory->Expose();
  }
  ~ViewKeeper() { memory->Unexpose(); }
  py::object blob;
  std::shared_ptr<SyncedMemory> memory;
};

// A numpy array over the blob's data or diff, with its shape.
py::array BlobArray(const py::object& owner, bool diff) {
  BlobF& blob = owner.cast<BlobF&>();
  std::vector<py::ssize_t> shape(blob.shape().begin(), blob.shape().end());
  if (blob.count() == 0) return py::array_t<float>(shape);
  const std::shared_ptr<SyncedMemory>& memory = diff ? blob.diff() : blob.data();
  float* values = static_cast<float*>(memory->mutable_cpu_data());
  py::capsule keeper(new ViewKeeper(owner, memory),
                     [](void* keeper) { delete static_cast<ViewKeeper*>(keeper); });
  return py::array_t<float>(shape, values, keeper);
}

void Reshape(BlobF& blob, const py::args& dims) {
  std::vector<int> shape;
  for (const py::handle& dim : dims) {
    const int value = dim.cast<int>();
    CREMA_REQUIRE(value >= 0, "Blob.reshape: dimension " << value << " is negative");
    shape.push_back(value);
  }
  blob.Reshape(shape);
}

void BindBlob(py::module_& m) {
  py::class_<BlobF, std::shared_ptr<BlobF>>(m, "Blob")
      .def(py::init([](const std::vector<int>& shape) { return std::make_shared<BlobF>(shape); }),
           py::arg("shape"))
      .def_property_readonly("shape", [](const BlobF& b) { return py::tuple(py::cast(b.shape())); })
      .def_property_readonly("count", [](const BlobF& b) { return b.count(); })
      .def_property_readonly("num", &BlobF::num)
      .def_property_readonly("channels", &BlobF::channels)
      .def_property_readonly("height", &BlobF::height)
      .def_property_readonly("width", &BlobF::width)
      .def_property_readonly(
          "data", [](const py::object& self) { return BlobArray(self, false); },
          "The values, a writable numpy view of the blob's memory.")
      .def_property_readonly(
          "diff", [](const py::object& self) { return BlobArray(self, true); },
          "The gradients, a writable numpy view of the blob's memory.")
      .def("reshape", &Reshape, "Blob.reshape(*dims): new shape (data kept only if it fits).");
}

void BindBlobVec(py::module_& m) {
  py::class_<BlobVec>(m, "BlobVec")
      .def("__len__", [](const BlobVec& v) { return v.blobs->size(); })
      .def("__getitem__",
           [](const BlobVec& v, py::ssize_t i) {
             const py::ssize_t size = static_cast<py::ssize_t>(v.blobs->size());
             if (i < 0) i += size;
             if (i < 0 || i >= size) throw py::index_error("blob index out of range");
             return (*v.blobs)[i];
           })
      .def(
          "__iter__",
          [](const BlobVec& v) { return py::make_iterator(v.blobs->begin(), v.blobs->end()); },
          py::keep_alive<0, 1>())
      .def(
          "add_blob",
          [](BlobVec& v, const py::args& dims) {
            auto blob = std::make_shared<BlobF>();
            Reshape(*blob, dims);
            v.blobs->push_back(blob);
          },
          "Adds a learnable blob of the given shape to the layer.");
}

// A net's C++ layer (Python layers are their own Python objects).
void BindNetLayer(py::module_& m) {
  py::class_<LayerF, std::shared_ptr<LayerF>>(m, "NetLayer")
      .def_property_readonly("type", [](const LayerF& l) { return std::string(l.type()); })
      .def_property_readonly(
          "blobs", [](LayerF& l) { return BlobVec{&l.blobs()}; }, py::keep_alive<0, 1>())
      .def("reshape", &LayerF::Reshape)
      .def("setup", &LayerF::SetUp);
}

std::shared_ptr<NetF> MakeNet(const std::string& file, int phase, int level,
                              const std::vector<std::string>& stages, const std::string& weights) {
  CREMA_REQUIRE(phase == TRAIN || phase == TEST,
                "Net: phase must be crema.TRAIN or crema.TEST, got " << phase);
  auto net = std::make_shared<NetF>(file, static_cast<Phase>(phase), level, &stages);
  if (!weights.empty()) net->CopyTrainedLayersFrom(weights);
  return net;
}

// net.layers: Python layers as their Python objects, the others as NetLayer.
py::list Layers(const NetF& net) {
  py::list layers;
  for (const auto& layer : net.layers()) {
    if (auto python = std::dynamic_pointer_cast<PythonLayer>(layer)) {
      layers.append(python->instance());
    } else {
      layers.append(py::cast(layer));
    }
  }
  return layers;
}

// MemoryData's arrays: (N, C, H, W) float32 data and N labels, C-contiguous;
// the caller keeps them alive (pycaffe's set_input_arrays does).
void SetInputArrays(NetF& net, py::array_t<float, py::array::c_style> data,
                    py::array_t<float, py::array::c_style> labels) {
  CREMA_REQUIRE(!net.layers().empty(), "set_input_arrays: the net has no layers");
  auto memory = std::dynamic_pointer_cast<MemoryDataLayer<float>>(net.layers()[0]);
  CREMA_REQUIRE(memory, "set_input_arrays: the net's first layer is a "
                            << net.layers()[0]->type() << ", not a MemoryData layer");
  CREMA_REQUIRE(data.ndim() == 4, "set_input_arrays: data must be 4-D (N, C, H, W), got "
                                      << data.ndim() << " dimensions");
  CREMA_REQUIRE(labels.size() == data.shape(0), "set_input_arrays: " << labels.size()
                                                                     << " labels for "
                                                                     << data.shape(0) << " items");
  memory->Reset(data.mutable_data(), labels.mutable_data(), static_cast<int>(data.shape(0)));
}

void Save(const NetF& net, const std::string& filename) {
  NetParameter param;
  net.ToProto(&param, false);
  WriteProtoToBinaryFile(param, filename);
}

std::vector<int> Ids(const std::vector<std::vector<int>>& ids, int layer) {
  CREMA_REQUIRE(
      layer >= 0 && layer < static_cast<int>(ids.size()),
      "layer index " << layer << " out of range (the net has " << ids.size() << " layers)");
  return ids[layer];
}

void BindNetClass(py::module_& m) {
  py::class_<NetF, std::shared_ptr<NetF>>(m, "Net", py::dynamic_attr())
      .def(py::init(&MakeNet), py::arg("network_file"), py::arg("phase"), py::arg("level") = 0,
           py::arg("stages") = std::vector<std::string>(), py::arg("weights") = std::string())
      .def(py::init([](const std::string& file, const std::string& weights, int phase) {
             return MakeNet(file, phase, 0, {}, weights);
           }),
           py::arg("network_file"), py::arg("weights"), py::arg("phase"))
      .def_property_readonly("name", &NetF::name)
      .def_property_readonly("phase", [](const NetF& n) { return static_cast<int>(n.phase()); })
      .def("_forward", &NetF::ForwardFromTo, py::arg("start"), py::arg("end"),
           py::call_guard<py::gil_scoped_release>())
      .def("_backward", &NetF::BackwardFromTo, py::arg("start"), py::arg("end"),
           py::call_guard<py::gil_scoped_release>())
      .def("reshape", &NetF::Reshape)
      .def("clear_param_diffs", &NetF::ClearParamDiffs)
      .def_property_readonly("_blob_loss_weights", &NetF::blob_loss_weights)
      .def("copy_from", py::overload_cast<const std::string&>(&NetF::CopyTrainedLayersFrom),
           py::arg("weights"), "Copies parameters by layer name from a .caffemodel or .h5.")
      .def("share_with", &NetF::ShareTrainedLayersWith, py::arg("other"),
           "Uses other's parameter memory (a test net sharing the training net's weights).")
      .def("save", &Save, py::arg("filename"), "Writes the parameters as a .caffemodel.")
      .def("save_hdf5", [](const NetF& n, const std::string& f) { n.ToHDF5(f); })
      .def("load_hdf5", &NetF::CopyTrainedLayersFromHDF5)
      .def_property_readonly("_blob_names", &NetF::blob_names)
      .def_property_readonly("_blobs", &NetF::blobs)
      .def_property_readonly("_layer_names", &NetF::layer_names)
      .def_property_readonly("layers", &Layers)
      .def_property_readonly("_inputs", &NetF::input_blob_indices)
      .def_property_readonly("_outputs", &NetF::output_blob_indices)
      .def("_top_ids", [](const NetF& n, int i) { return Ids(n.top_id_vecs(), i); })
      .def("_bottom_ids", [](const NetF& n, int i) { return Ids(n.bottom_id_vecs(), i); })
      .def("_set_input_arrays", &SetInputArrays);
}

}  // namespace

void BindNet(py::module_& m) {
  BindBlob(m);
  BindBlobVec(m);
  BindNetLayer(m);
  BindNetClass(m);
}

}  // namespace python
}  // namespace crema
