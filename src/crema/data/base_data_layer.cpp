#include "crema/layers/base_data_layer.hpp"

namespace crema {

template <typename Dtype>
BaseDataLayer<Dtype>::BaseDataLayer(const LayerParameter& param)
    : Layer<Dtype>(param), transform_param_(param.transform_param()) {}

template <typename Dtype>
void BaseDataLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  output_labels_ = top.size() > 1;
  top_count_ = top.size();
  try {
    data_transformer_.reset(new DataTransformer<Dtype>(transform_param_, this->phase_));
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (" << this->type()
                         << "): " << e.what());
  }
  DataLayerSetUp(bottom, top);
}

template <typename Dtype>
BasePrefetchingDataLayer<Dtype>::BasePrefetchingDataLayer(const LayerParameter& param)
    : BaseDataLayer<Dtype>(param),
      prefetch_free_("layer '" + param.name() + "' (free batches)", false),
      prefetch_full_("layer '" + param.name() + "' (prefetched batches)") {
  const uint32_t prefetch = param.data_param().prefetch();
  CREMA_REQUIRE(prefetch <= kMaxPrefetchBatches, "layer '" << param.name() << "' (" << param.type()
                                                           << "): data_param.prefetch " << prefetch
                                                           << " is above the limit of "
                                                           << kMaxPrefetchBatches << " batches");
  const int depth = std::max<int>(1, static_cast<int>(prefetch));
  for (int i = 0; i < depth; ++i) {
    prefetch_.emplace_back(new Batch<Dtype>());
    prefetch_free_.push(prefetch_.back().get());
  }
}

template <typename Dtype>
BasePrefetchingDataLayer<Dtype>::~BasePrefetchingDataLayer() {
  StopInternalThread();
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                                 const std::vector<Blob<Dtype>*>& top) {
  BaseDataLayer<Dtype>::LayerSetUp(bottom, top);
  // Allocate here, not on the prefetch thread: in GPU mode host memory is
  // pinned, and every buffer exists before the thread touches it.
  for (auto& batch : prefetch_) {
    for (Blob<Dtype>* blob : batch->Served(this->top_count_)) {
      blob->mutable_cpu_data();
#ifdef CREMA_CUDA
      if (Context::mode() == Context::GPU) blob->mutable_gpu_data();
#endif
    }
  }
  VLOG(1) << "Initializing prefetch";
  StartInternalThread();
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::InternalThreadEntry() {
#ifdef CREMA_CUDA
  cudaStream_t stream = nullptr;
  if (Context::mode() == Context::GPU) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
#endif
  ProducerPriority::BoundScope bound(&priority_);
  try {
    while (!must_stop()) {
      Batch<Dtype>* batch = prefetch_free_.pop();
      priority_.SetAhead(2 * prefetch_full_.size() >= prefetch_.size());
      load_batch(batch);
#ifdef CREMA_CUDA
      if (Context::mode() == Context::GPU) {
        // Copy to the device on this thread's stream, overlapping the solver.
        for (Blob<Dtype>* blob : batch->Served(this->top_count_)) {
          blob->data()->async_gpu_push(stream);
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
      }
#endif
      prefetch_full_.push(batch);
    }
  } catch (...) {
#ifdef CREMA_CUDA
    if (stream) cudaStreamDestroy(stream);
#endif
    throw;
  }
#ifdef CREMA_CUDA
  if (stream) CUDA_CHECK(cudaStreamDestroy(stream));
#endif
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::OnInternalThreadFailed() {
  prefetch_full_.push(nullptr);
}

template <typename Dtype>
Batch<Dtype>* BasePrefetchingDataLayer<Dtype>::NextBatch() {
  if (prefetch_current_) prefetch_free_.push(prefetch_current_);
  if (!prefetch_full_.try_pop(&prefetch_current_)) {
    priority_.Hurry();  // the net waits: no longer a background job
    prefetch_current_ = prefetch_full_.pop();
  }
  if (prefetch_current_) ++batches_served_;
  if (!prefetch_current_) {
    prefetch_full_.push(nullptr);  // every later Forward fails the same way
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (" << this->type()
                         << "): reading data failed: " << failure_message());
  }
  return prefetch_current_;
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
  Batch<Dtype>* batch = NextBatch();
  const std::vector<Blob<Dtype>*> served = batch->Served(top.size());
  for (size_t i = 0; i < served.size(); ++i) {
    top[i]->ReshapeLike(*served[i]);
    if (!this->IsShared()) {
      // The tops point into the batch, which stays out of the free queue
      // until the next Forward (NextBatch): no copy of a batch that can be
      // tens of MB.
      top[i]->set_cpu_data(served[i]->mutable_cpu_data());
    } else {
      // A layer shared by several solvers hands the next batch to the next
      // solver while this one still computes on its tops: they get copies.
      cpu_copy(served[i]->count(), served[i]->cpu_data(), top[i]->mutable_cpu_data());
    }
  }
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
#ifdef CREMA_CUDA
  Batch<Dtype>* batch = NextBatch();
  const std::vector<Blob<Dtype>*> served = batch->Served(top.size());
  for (size_t i = 0; i < served.size(); ++i) {
    top[i]->ReshapeLike(*served[i]);
    gpu_memcpy(served[i]->count() * sizeof(Dtype), served[i]->gpu_data(),
               top[i]->mutable_gpu_data());
  }
#else
  NO_GPU;
#endif
}

INSTANTIATE_CLASS(BaseDataLayer);
INSTANTIATE_CLASS(BasePrefetchingDataLayer);

}  // namespace crema
