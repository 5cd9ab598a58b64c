// Data: reads Datum records from an LMDB or LevelDB database (Caffe's
// format), through the shared DataReader of its source, transforms them and
// serves batches prefetched on its own thread. Each solver has its own Data
// layer; the reader deals each one its slice of the records.
#ifndef CREMA_DATA_DATA_LAYER_HPP_
#define CREMA_DATA_DATA_LAYER_HPP_

#include <functional>
#include <memory>
#include <vector>

#include "crema/data_reader.hpp"
#include "crema/layers/base_data_layer.hpp"

namespace crema {

template <typename Dtype>
class DataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  explicit DataLayer(const LayerParameter& param);
  ~DataLayer() override;
  void DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                      const std::vector<Blob<Dtype>*>& top) override;
  const char* type() const override { return "Data"; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  // The reader hands each solver its own slice: never shared.
  bool ShareInParallel() const override { return false; }

  const DataReader& reader() const { return *reader_; }
  // Where a resumed run must start this layer's reader so that it serves
  // next what this layer would have served next.
  DataReaderPosition ResumePosition() const;
  // The position goes into the state's data_position, keyed by the reader.
  void AppendResumeState(SolverState* state) const override;
  void RestoreResumeState(const SolverState& state) override;

 protected:
  void load_batch(Batch<Dtype>* batch) override;

  // Opens (or joins) the reader where a resumed run stands and returns its
  // first record, left first in the queue (its shape is the batch's).
  const DataRecord& StartReader();
  // Seeds the thread's generator for the next batch (its number counted
  // from the reader's start) when the batch will draw random numbers.
  void SeedNextBatch(bool draws_random_numbers);
  // Hands `use` each of the next batch_size records with its item index and
  // gives them back to the reader together at the end. An error `use`
  // throws is reported naming the layer, the record's key and the source.
  void ForEachRecord(int batch_size, const std::function<void(int, const DataRecord&)>& use);
  // Takes the next record from the reader (a null one means it failed).
  DataRecord* NextRecord();

  std::unique_ptr<DataReader> reader_;
  // A resumed run's start, taken from the solver state before SetUp.
  std::unique_ptr<DataReaderPosition> resume_start_;
  // Each batch's random transformations (mirror, crop) are drawn from a
  // generator seeded by this and the batch's number, so a resumed run
  // transforms batch k exactly as the uninterrupted run did.
  uint64_t transform_seed_ = 0;
  uint64_t batches_loaded_ = 0;  // on the prefetch thread only
};

}  // namespace crema

#endif  // CREMA_DATA_DATA_LAYER_HPP_
