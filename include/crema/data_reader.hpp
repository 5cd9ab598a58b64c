// DataReader: the one thread that walks a database for every solver reading
// it. One reader body exists per (layer name, source, phase); each solver's
// Data layer gets its own pair of queues (free, full) from it, and the body
// deals records round-robin over the solvers in rank order, so N solvers read
// N disjoint, interleaved slices of the data in a fixed order, and the
// database is opened once. At the end of the database it wraps around; with
// data_param.shuffle every pass reads the records in an order of its own.
//
// Resuming: a body counts the records it has dealt from the start of the
// database. A solver state stores, per reader, where the solvers' unconsumed
// records began; the Data layer of a resumed net passes its entry to the
// reader, whose body then starts there instead of at rand_skip (a shuffling
// body also takes back its seed, so the passes keep their orders).
#ifndef CREMA_DATA_READER_HPP_
#define CREMA_DATA_READER_HPP_

#include <atomic>
#include <boost/thread/mutex.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crema/common.hpp"
#include "crema/internal_thread.hpp"
#include "crema/proto/crema.pb.h"
#include "crema/util/blocking_queue.hpp"
#include "crema/util/db.hpp"

namespace crema {

// One database record as the reader hands it out: the parsed Datum and its
// key, so that a record that fails later (an image that does not decode) can
// be named.
struct DataRecord {
  Datum datum;
  std::string key;
  // For an AnnotatedData layer's source (AnnotatedDatum records): the
  // record's type and boxes; its image is moved into `datum`.
  AnnotatedDatum annotated;
};

class DataReader {
 public:
  // Joins (or creates) the body for this layer's source, as the calling
  // thread's solver (Context::solver_rank()). A database that cannot be
  // opened is a user error naming the layer and the path. start: where a
  // resumed run stands (null: a fresh start); only the reader that creates
  // the body uses it, later ones join the body where it is.
  explicit DataReader(const LayerParameter& param, const DataReaderPosition* start = nullptr);
  ~DataReader();

  // Records come out of full(); the consumer hands each back through free().
  // A null record from full() means the reader failed; failure_message() says why.
  BlockingQueue<DataRecord*>& free() const { return queue_pair_->free; }
  BlockingQueue<DataRecord*>& full() const { return queue_pair_->full; }
  std::string failure_message() const;
  // The consumer found full() empty: the reading thread, which runs at idle
  // priority while it is ahead (ProducerPriority), is back at normal priority.
  void Hurry() const;

  // Records this solver's slice has received so far.
  uint64_t records_read() const;

  // This reader's key: layer name, source and phase.
  const std::string& key() const { return key_; }
  // The key of the reader of a Data layer with these parameters.
  static std::string Key(const LayerParameter& param);
  // Where the body started dealing (records from the start of the database,
  // counting wrap-arounds), and how many solvers it deals to.
  uint64_t start_position() const;
  int solver_count() const;
  // The batch count saved with the start position (0 for a fresh start).
  uint64_t start_batches() const;
  // Whether the body reads each pass in an order of its own
  // (data_param.shuffle), and the seed of those orders.
  bool shuffles() const;
  uint64_t shuffle_seed() const;

  // The number of reader bodies alive in this process (for tests).
  static size_t live_bodies();

 private:
  struct QueuePair {
    QueuePair(int rank, uint64_t capacity, const std::string& name);
    ~QueuePair();
    // The body's next record to fill: a returned one, else a new one while
    // fewer than `capacity` exist, else the next one the consumer returns.
    // Records are made as reading needs them, so a batch size read from a
    // file costs nothing until records arrive. (Body thread only.)
    DataRecord* TakeFree();
    const int rank;
    const uint64_t capacity;  // records in circulation, at most
    uint64_t allocated = 0;   // records made so far (body thread only)
    std::atomic<uint64_t> records{0};
    BlockingQueue<DataRecord*> free;
    BlockingQueue<DataRecord*> full;
  };
  class Body;

  std::string key_;
  std::shared_ptr<QueuePair> queue_pair_;
  std::shared_ptr<Body> body_;

  DISABLE_COPY_AND_ASSIGN(DataReader);
};

}  // namespace crema

#endif  // CREMA_DATA_READER_HPP_
