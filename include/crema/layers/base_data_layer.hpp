// Data layers: BaseDataLayer (no bottoms, tops data and optionally label
// and a third, a DataTransformer) and BasePrefetchingDataLayer, which fills batches on its
// own thread while the solver computes: PREFETCH batches cycle between a free
// and a full queue, and Forward takes the next full batch.
#ifndef CREMA_LAYERS_BASE_DATA_LAYER_HPP_
#define CREMA_LAYERS_BASE_DATA_LAYER_HPP_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "crema/blob.hpp"
#include "crema/data_transformer.hpp"
#include "crema/internal_thread.hpp"
#include "crema/layer.hpp"
#include "crema/util/blocking_queue.hpp"
#include "crema/util/pass_order.hpp"
#include "crema/util/producer_priority.hpp"

namespace crema {

// data_param.prefetch above this is refused: each prefetched batch holds a
// whole batch's blobs, so the count read from a file is bounded first.
constexpr uint32_t kMaxPrefetchBatches = 256;

template <typename Dtype>
class BaseDataLayer : public Layer<Dtype> {
 public:
  explicit BaseDataLayer(const LayerParameter& param);
  // Creates the transformer, then the subclass's DataLayerSetUp shapes the tops.
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  virtual void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                              const std::vector<Blob<Dtype>*>& top) {}
  // Data layers shape their tops themselves.
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override {}
  int ExactNumBottomBlobs() const override { return 0; }

 protected:
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override {}

  TransformationParameter transform_param_;
  std::unique_ptr<DataTransformer<Dtype>> data_transformer_;
  bool output_labels_ = false;
  size_t top_count_ = 0;  // the tops LayerSetUp was given
};

template <typename Dtype>
struct Batch {
  Blob<Dtype> data_;
  Blob<Dtype> label_;
  // A third top, for the layers that have one (ImageSegData's image sizes).
  Blob<Dtype> extra_;
  // The blobs the layer's first `tops` tops show, in top order.
  std::vector<Blob<Dtype>*> Served(size_t tops) {
    std::vector<Blob<Dtype>*> blobs{&data_, &label_, &extra_};
    blobs.resize(std::min(tops, blobs.size()));
    return blobs;
  }
};

template <typename Dtype>
class BasePrefetchingDataLayer : public BaseDataLayer<Dtype>, public InternalThread {
 public:
  explicit BasePrefetchingDataLayer(const LayerParameter& param);
  // Subclasses must stop the thread in their own destructors, before the
  // state their load_batch reads goes away.
  ~BasePrefetchingDataLayer() override;
  // Sets up, allocates every batch on this thread, then starts prefetching.
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;

  // How many times Forward had to wait for a batch (the pipeline was slower
  // than the net).
  size_t waits() const { return prefetch_full_.starved_count(); }
  // Batches Forward has taken (plus, after a resume, those taken before it).
  uint64_t batches_served() const { return batches_served_; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;

  void InternalThreadEntry() override;
  void OnInternalThreadFailed() override;
  // Fills one batch (on the prefetch thread).
  virtual void load_batch(Batch<Dtype>* batch) = 0;
  std::vector<std::unique_ptr<Batch<Dtype>>> prefetch_;
  BlockingQueue<Batch<Dtype>*> prefetch_free_;
  BlockingQueue<Batch<Dtype>*> prefetch_full_;
  Batch<Dtype>* prefetch_current_ = nullptr;
  uint64_t batches_served_ = 0;
  // The prefetch thread's: idle while half the batches or more wait ready.
  ProducerPriority priority_;

 private:
  // Waits for the next full batch; a failed prefetch thread is a user error
  // carrying its message.
  Batch<Dtype>* NextBatch();
};

}  // namespace crema

#endif  // CREMA_LAYERS_BASE_DATA_LAYER_HPP_
