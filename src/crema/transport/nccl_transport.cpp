#include "crema/transport/nccl_transport.hpp"

#include <utility>

#include "crema/syncedmem.hpp"
#include "crema/util/math_functions.hpp"

namespace crema {

void RequireNccl(ncclResult_t result, const char* what) {
  CREMA_REQUIRE(result == ncclSuccess, "NCCL " << what << ": " << ncclGetErrorString(result));
}

namespace {

template <typename Dtype>
ncclDataType_t NcclType() {
  return sizeof(Dtype) == sizeof(float) ? ncclFloat : ncclDouble;
}

}  // namespace

template <typename Dtype>
NcclTransport<Dtype>::NcclTransport(std::vector<ncclComm_t> comms, std::vector<int> devices,
                                    int total_solvers, size_t count)
    : comms_(std::move(comms)),
      devices_(std::move(devices)),
      total_solvers_(total_solvers),
      count_(count),
      barrier_(static_cast<int>(devices_.size())),
      streams_(devices_.size()),
      filled_(devices_.size()),
      buffers_(devices_.size(), nullptr) {
  const int previous = Context::device();
  for (size_t i = 0; i < devices_.size(); ++i) {
    CUDA_CHECK(cudaSetDevice(devices_[i]));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&filled_[i], cudaEventDisableTiming));
  }
  CUDA_CHECK(cudaSetDevice(previous));
}

template <typename Dtype>
std::unique_ptr<NcclTransport<Dtype>> NcclTransport<Dtype>::ForLocalDevices(
    const std::vector<int>& devices, int total_solvers, size_t count) {
  std::vector<ncclComm_t> comms(devices.size());
  RequireNccl(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()),
              "could not join the local GPUs");
  return std::unique_ptr<NcclTransport>(
      new NcclTransport(std::move(comms), devices, total_solvers, count));
}

template <typename Dtype>
std::unique_ptr<NcclTransport<Dtype>> NcclTransport<Dtype>::ForGroup(const ncclUniqueId& id,
                                                                     int size, int rank,
                                                                     size_t count) {
  ncclComm_t comm = nullptr;
  RequireNccl(ncclCommInitRank(&comm, size, id, rank), "could not join the group");
  return std::unique_ptr<NcclTransport>(
      new NcclTransport({comm}, {Context::device()}, size, count));
}

template <typename Dtype>
NcclTransport<Dtype>::~NcclTransport() {
  for (ncclComm_t comm : comms_) ncclCommDestroy(comm);
  for (size_t i = 0; i < devices_.size(); ++i) {
    cudaSetDevice(devices_[i]);
    if (buffers_[i]) cudaFree(buffers_[i]);
    cudaStreamDestroy(streams_[i]);
    cudaEventDestroy(filled_[i]);
  }
  cudaSetDevice(Context::device());
}

template <typename Dtype>
Dtype* NcclTransport<Dtype>::Buffer(int i) {
  if (!buffers_[i]) {
    DeviceMalloc(reinterpret_cast<void**>(&buffers_[i]), (count_ + 1) * sizeof(Dtype));
  }
  return buffers_[i];
}

template <typename Dtype>
bool NcclTransport<Dtype>::Average(int local_index, const std::vector<Blob<Dtype>*>& params,
                                   Dtype* code) {
  Dtype* buffer = Buffer(local_index);
  ForEachPacked(params, [&](const Blob<Dtype>& blob, size_t at) {
    gpu_memcpy(blob.count() * sizeof(Dtype), blob.gpu_diff(), buffer + at);
  });
  CUDA_CHECK(cudaMemcpy(buffer + count_, code, sizeof(Dtype), cudaMemcpyHostToDevice));
  if (!barrier_.Wait()) return false;
  cudaStream_t stream = streams_[local_index];
  // The buffer was filled on the default stream (device copies and the
  // code's upload may still be in flight); the non-blocking NCCL stream does
  // not wait for that stream by itself.
  CUDA_CHECK(cudaEventRecord(filled_[local_index], cudaStreamLegacy));
  CUDA_CHECK(cudaStreamWaitEvent(stream, filled_[local_index], 0));
  RequireNccl(ncclAllReduce(buffer, buffer, count_ + 1, NcclType<Dtype>(), ncclSum,
                            comms_[local_index], stream),
              "all-reduce");
  CUDA_CHECK(cudaStreamSynchronize(stream));
  gpu_scal(static_cast<int>(count_), Dtype(1) / total_solvers_, buffer);
  CUDA_CHECK(cudaMemcpy(code, buffer + count_, sizeof(Dtype), cudaMemcpyDeviceToHost));
  ForEachPacked(params, [&](Blob<Dtype>& blob, size_t at) {
    gpu_memcpy(blob.count() * sizeof(Dtype), buffer + at, blob.mutable_gpu_diff());
  });
  return true;
}

template <typename Dtype>
void NcclTransport<Dtype>::Broadcast(const std::vector<Blob<Dtype>*>& params) {
  RequireNccl(ncclGroupStart(), "group start");
  for (Blob<Dtype>* param : params) {
    RequireNccl(ncclBcast(param->mutable_gpu_data(), param->count(), NcclType<Dtype>(), 0,
                          comms_[0], cudaStreamLegacy),
                "broadcast");
  }
  RequireNccl(ncclGroupEnd(), "broadcast");
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

template class NcclTransport<float>;
template class NcclTransport<double>;

template <typename Dtype>
std::unique_ptr<GradientTransport<Dtype>> MakeLocalNcclTransport(int total_solvers, size_t count,
                                                                 const std::vector<int>& devices) {
  return NcclTransport<Dtype>::ForLocalDevices(devices, total_solvers, count);
}

template std::unique_ptr<GradientTransport<float>> MakeLocalNcclTransport<float>(
    int, size_t, const std::vector<int>&);
template std::unique_ptr<GradientTransport<double>> MakeLocalNcclTransport<double>(
    int, size_t, const std::vector<int>&);

}  // namespace crema
