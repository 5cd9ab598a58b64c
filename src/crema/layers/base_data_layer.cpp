#include "crema/layers/base_data_layer.hpp"

namespace crema {

template <typename Dtype>
BaseDataLayer<Dtype>::BaseDataLayer(const LayerParameter& param)
    : Layer<Dtype>(param), transform_param_(param.transform_param()) {}

template <typename Dtype>
void BaseDataLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  output_labels_ = top.size() > 1;
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
    batch->data_.mutable_cpu_data();
    if (this->output_labels_) batch->label_.mutable_cpu_data();
#ifndef CPU_ONLY
    if (Context::mode() == Context::GPU) {
      batch->data_.mutable_gpu_data();
      if (this->output_labels_) batch->label_.mutable_gpu_data();
    }
#endif
  }
  VLOG(1) << "Initializing prefetch";
  StartInternalThread();
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::InternalThreadEntry() {
#ifndef CPU_ONLY
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
#ifndef CPU_ONLY
      if (Context::mode() == Context::GPU) {
        // Copy to the device on this thread's stream, overlapping the solver.
        batch->data_.data()->async_gpu_push(stream);
        if (this->output_labels_) batch->label_.data()->async_gpu_push(stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
      }
#endif
      prefetch_full_.push(batch);
    }
  } catch (...) {
#ifndef CPU_ONLY
    if (stream) cudaStreamDestroy(stream);
#endif
    throw;
  }
#ifndef CPU_ONLY
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
  top[0]->ReshapeLike(batch->data_);
  if (this->output_labels_) top[1]->ReshapeLike(batch->label_);
  if (!this->IsShared()) {
    // The tops point into the batch, which stays out of the free queue until
    // the next Forward (NextBatch): no copy of a batch that can be tens of MB.
    top[0]->set_cpu_data(batch->data_.mutable_cpu_data());
    if (this->output_labels_) top[1]->set_cpu_data(batch->label_.mutable_cpu_data());
    return;
  }
  // A layer shared by several solvers hands the next batch to the next
  // solver while this one still computes on its tops: they get copies.
  cpu_copy(batch->data_.count(), batch->data_.cpu_data(), top[0]->mutable_cpu_data());
  if (this->output_labels_) {
    cpu_copy(batch->label_.count(), batch->label_.cpu_data(), top[1]->mutable_cpu_data());
  }
}

template <typename Dtype>
void BasePrefetchingDataLayer<Dtype>::Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                                                  const std::vector<Blob<Dtype>*>& top) {
#ifndef CPU_ONLY
  Batch<Dtype>* batch = NextBatch();
  top[0]->ReshapeLike(batch->data_);
  gpu_memcpy(batch->data_.count() * sizeof(Dtype), batch->data_.gpu_data(),
             top[0]->mutable_gpu_data());
  if (this->output_labels_) {
    top[1]->ReshapeLike(batch->label_);
    gpu_memcpy(batch->label_.count() * sizeof(Dtype), batch->label_.gpu_data(),
               top[1]->mutable_gpu_data());
  }
#else
  NO_GPU;
#endif
}

INSTANTIATE_CLASS(BaseDataLayer);
INSTANTIATE_CLASS(BasePrefetchingDataLayer);

}  // namespace crema
