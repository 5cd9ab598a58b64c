#include "crema/data/data_layer.hpp"

#include <vector>

namespace crema {

template <typename Dtype>
DataLayer<Dtype>::DataLayer(const LayerParameter& param) : BasePrefetchingDataLayer<Dtype>(param) {}

template <typename Dtype>
DataLayer<Dtype>::~DataLayer() {
  // The prefetch thread reads reader_: stop it before the reader goes.
  this->StopInternalThread();
}

template <typename Dtype>
DataRecord* DataLayer<Dtype>::NextRecord() {
  DataRecord* record = nullptr;
  if (!reader_->full().try_pop(&record)) {
    reader_->Hurry();  // this thread waits: the reader is no longer a background job
    record = reader_->full().pop();
  }
  if (!record) {
    reader_->full().push(nullptr);  // later readers of this queue fail too
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (" << this->type()
                         << "): reading the database failed: " << reader_->failure_message());
  }
  return record;
}

template <typename Dtype>
const DataRecord& DataLayer<Dtype>::StartReader() {
  reader_.reset(new DataReader(this->layer_param_, resume_start_.get()));
  transform_seed_ = DrawSeed();
  this->batches_served_ = reader_->start_batches();
  batches_loaded_ = reader_->start_batches();
  // Peeking leaves the first record first in the queue.
  DataRecord* first = reader_->full().peek();
  if (!first) NextRecord();  // the reader failed: report why
  return *first;
}

template <typename Dtype>
void DataLayer<Dtype>::DataLayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const DataRecord& first = StartReader();
  const int batch_size = static_cast<int>(this->layer_param_.data_param().batch_size());
  std::vector<int> shape;
  try {
    shape = this->data_transformer_->InferBlobShape(first.datum);
  } catch (const Error& e) {
    CREMA_FAIL("layer '" << this->layer_param_.name() << "' (Data): record '" << first.key
                         << "' of " << this->layer_param_.data_param().source() << ": "
                         << e.what());
  }
  shape[0] = batch_size;
  top[0]->Reshape(shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(shape);
  LOG_IF(INFO, Context::is_rank_zero())
      << "output data size: " << shape[0] << "," << shape[1] << "," << shape[2] << "," << shape[3];
  if (this->output_labels_) {
    const std::vector<int> label_shape{batch_size};
    top[1]->Reshape(label_shape);
    for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
  }
}

template <typename Dtype>
void DataLayer<Dtype>::SeedNextBatch(bool draws_random_numbers) {
  // Seeding costs a tenth of a plain batch's transform: skipped when unused.
  const uint64_t batch_number = batches_loaded_++;
  if (draws_random_numbers) {
    Context::set_random_seed(transform_seed_ + batch_number * kSeedSpread);
  }
}

template <typename Dtype>
void DataLayer<Dtype>::ForEachRecord(int batch_size,
                                     const std::function<void(int, const DataRecord&)>& use) {
  // The records go back to the reader together at the end of the batch: one
  // per item would wake the reader (and switch threads) once per item when
  // transforming is slower than reading, as decoding encoded images is.
  std::vector<DataRecord*> used;
  used.reserve(batch_size);
  const auto give_back = [&] {
    for (DataRecord* record : used) reader_->free().push(record);
  };
  for (int item = 0; item < batch_size; ++item) {
    DataRecord* record = nullptr;
    try {
      record = NextRecord();
    } catch (...) {
      give_back();
      throw;
    }
    used.push_back(record);
    try {
      use(item, *record);
    } catch (const Error& e) {
      const std::string key = record->key;
      give_back();
      CREMA_FAIL("layer '" << this->layer_param_.name() << "' (" << this->type() << "): record '"
                           << key << "' of " << this->layer_param_.data_param().source() << ": "
                           << e.what());
    }
  }
  give_back();
}

template <typename Dtype>
void DataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const int item_size = batch->data_.count(1);
  const std::vector<int>& shape = batch->data_.shape();
  Dtype* data = batch->data_.mutable_cpu_data();
  Dtype* label = this->output_labels_ ? batch->label_.mutable_cpu_data() : nullptr;
  SeedNextBatch(this->data_transformer_->draws_random_numbers());
  ForEachRecord(batch->data_.shape(0), [&](int item, const DataRecord& record) {
    this->data_transformer_->Transform(record.datum, data + item * item_size, shape);
    if (label) label[item] = static_cast<Dtype>(record.datum.label());
  });
}

template <typename Dtype>
DataReaderPosition DataLayer<Dtype>::ResumePosition() const {
  // The records of the batches served are consumed; those prefetched are not.
  // Every solver of the reader takes one record per round, so the round
  // after the consumed ones starts at start + consumed * solvers.
  const uint64_t batch_size = this->layer_param_.data_param().batch_size();
  const uint64_t consumed = (this->batches_served_ - reader_->start_batches()) * batch_size;
  DataReaderPosition position;
  position.set_key(reader_->key());
  position.set_position(reader_->start_position() + consumed * reader_->solver_count());
  position.set_batches(this->batches_served_);
  if (reader_->shuffles()) position.set_shuffle_seed(reader_->shuffle_seed());
  return position;
}

template <typename Dtype>
void DataLayer<Dtype>::AppendResumeState(SolverState* state) const {
  *state->add_data_position() = ResumePosition();
}

template <typename Dtype>
void DataLayer<Dtype>::RestoreResumeState(const SolverState& state) {
  const std::string key = DataReader::Key(this->layer_param_);
  for (const DataReaderPosition& position : state.data_position()) {
    if (position.key() == key) resume_start_.reset(new DataReaderPosition(position));
  }
}

INSTANTIATE_CLASS(DataLayer);
REGISTER_LAYER_CLASS(Data);

}  // namespace crema
