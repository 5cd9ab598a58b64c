#include "crema/data_reader.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "crema/layer.hpp"
#include "crema/util/pass_order.hpp"
#include "crema/util/producer_priority.hpp"

namespace crema {

// The thread that owns the database cursor. Every solver of every process
// takes one record per round, in rank order; this process's solvers get theirs
// through their queue pairs (each waited for when first needed, so rank 0 is
// served while the others are still being built), the other processes'
// records are skipped. The database wraps at its end. With data_param.shuffle
// each pass reads every record once, in an order of its own drawn from the
// reader's seed and the pass (PassOrder), the cursor seeking each by its key.
class DataReader::Body : public InternalThread {
 public:
  // start: where a resumed run stands, or null for a fresh start.
  Body(const LayerParameter& param, int solver_count, int first_local, int local_count,
       const DataReaderPosition* start)
      : param_(param),
        solver_count_(solver_count),
        first_local_(first_local),
        local_count_(local_count),
        new_pairs_("new reader queues", false) {
    const DataParameter& data = param_.data_param();
    CREMA_REQUIRE(!data.source().empty(), "layer '" << param_.name() << "' (" << param_.type()
                                                    << "): data_param.source is not set");
    db_ = db::GetDB(data.backend());
    try {
      db_->Open(data.source(), db::READ);
      cursor_ = db_->NewCursor();
    } catch (const Error& e) {
      CREMA_FAIL("layer '" << param_.name() << "' (" << param_.type() << "): " << e.what());
    }
    CREMA_REQUIRE(cursor_->valid(), "layer '" << param_.name() << "' (" << param_.type()
                                              << "): the database " << data.source()
                                              << " holds no records");
    // The draws happen whether or not a resumed state replaces them, so the
    // layer's later draws (its transformation seed) are the straight run's.
    const unsigned skip = data.rand_skip() ? Context::rng()() % data.rand_skip() : 0;
    if (data.shuffle()) {
      const uint64_t drawn = DrawSeed();
      shuffle_seed_ = start && start->has_shuffle_seed() ? start->shuffle_seed() : drawn;
      ReadKeys();
    }
    if (start) {
      LOG(INFO) << "Resuming layer '" << param_.name() << "' at record " << start->position()
                << " of " << data.source();
      start_position_ = start->position();
      start_batches_ = start->batches();
      SkipTo(start_position_);
    } else if (data.rand_skip()) {
      // Skip a random number of records, so solvers of several runs start apart.
      LOG(INFO) << "Skipping first " << skip << " data points.";
      start_position_ = skip;
      SkipTo(skip);
    }
    StartInternalThread();
  }

  ~Body() override { StopInternalThread(); }

  void Register(const std::shared_ptr<QueuePair>& pair) { new_pairs_.push(pair); }
  void Hurry() { priority_.Hurry(); }
  // Whether a reader of this rank, in a run of solver_count solvers, may join
  // this body; claims the rank if so. (Called under BodiesMutex.) Two nets of
  // one solver over one source (two nets built from Python, say) each get
  // their own body: sharing one, the second would wait for records the first
  // takes.
  bool Claim(int rank, int solver_count) {
    if (solver_count != solver_count_ || claimed_ranks_.count(rank)) return false;
    claimed_ranks_.insert(rank);
    return true;
  }

  uint64_t start_position() const { return start_position_; }
  uint64_t start_batches() const { return start_batches_; }
  int solver_count() const { return solver_count_; }
  bool shuffles() const { return !keys_.empty(); }
  uint64_t shuffle_seed() const { return shuffle_seed_; }

 protected:
  void InternalThreadEntry() override {
    ProducerPriority::BoundScope bound(&priority_);
    std::vector<std::shared_ptr<QueuePair>> pairs(local_count_);
    while (!must_stop()) {
      for (int rank = 0; rank < solver_count_; ++rank) {
        const int local = rank - first_local_;
        if (local < 0 || local >= local_count_) {
          Advance();  // another process's record
          continue;
        }
        while (!pairs[local]) {
          std::shared_ptr<QueuePair> pair = new_pairs_.pop();
          const int index = pair->rank - first_local_;
          // Invariant: ranks come from the Context the solvers of this process
          // share (rank / local count picks this body's group), not from input.
          CHECK(index >= 0 && index < local_count_)
              << "solver rank " << pair->rank << " does not belong to this process";
          pairs[index] = pair;
          boost::mutex::scoped_lock lock(pairs_mutex_);
          pairs_.push_back(pair);
        }
        ReadOne(pairs[local].get());
      }
    }
  }

  // Wakes every consumer with a null record: reading has failed.
  void OnInternalThreadFailed() override {
    boost::mutex::scoped_lock lock(pairs_mutex_);
    for (auto& pair : pairs_) pair->full.push(nullptr);
  }

 private:
  void ReadOne(QueuePair* pair) {
    DataRecord* record = pair->TakeFree();
    if (shuffles() && !positioned_) {
      cursor_->Seek(keys_[walk_.current()]);
      positioned_ = true;
    }
    priority_.SetAhead(2 * pair->full.size() >= pair->capacity);
    record->key = cursor_->key();
    if (param_.type() == "AnnotatedData") {
      CREMA_REQUIRE(record->annotated.ParseFromString(cursor_->value()),
                    "layer '" << param_.name() << "': record '" << record->key << "' of "
                              << param_.data_param().source() << " is not a valid AnnotatedDatum");
      record->datum.Swap(record->annotated.mutable_datum());
    } else {
      CREMA_REQUIRE(record->datum.ParseFromString(cursor_->value()),
                    "layer '" << param_.name() << "': record '" << record->key << "' of "
                              << param_.data_param().source() << " is not a valid Datum");
    }
    pair->records++;
    pair->full.push(record);
    Advance();
  }

  // Every key, in key order, and pass 0's order over them.
  void ReadKeys() {
    for (cursor_->SeekToFirst(); cursor_->valid(); cursor_->Next()) keys_.push_back(cursor_->key());
    walk_ = PassWalk(keys_.size(), true, shuffle_seed_);
    positioned_ = false;
  }

  // Moves the walk `count` records on from the first. A full pass counts
  // the records once, so a far position costs at most two passes.
  void SkipTo(uint64_t count) {
    if (shuffles()) {
      walk_ = PassWalk(keys_.size(), true, shuffle_seed_, count);
      positioned_ = false;
      return;
    }
    uint64_t size = 0;
    for (; size < count; ++size) {
      cursor_->Next();
      if (!cursor_->valid()) {
        cursor_->SeekToFirst();
        ++size;
        const uint64_t remaining = (count - size) % size;
        for (uint64_t i = 0; i < remaining; ++i) Advance();
        return;
      }
    }
  }

  void Advance() {
    if (shuffles()) {
      walk_.Advance();
      positioned_ = false;  // ReadOne seeks the record when it is this process's
      return;
    }
    cursor_->Next();
    if (!cursor_->valid()) {
      VLOG(1) << "Restarting data prefetching from start.";
      cursor_->SeekToFirst();
    }
  }

  const LayerParameter param_;
  const int solver_count_;  // every process's solvers
  const int first_local_;   // the first rank of this process
  const int local_count_;   // this process's solvers
  uint64_t start_position_ = 0;
  uint64_t start_batches_ = 0;
  std::unique_ptr<db::DB> db_;
  std::unique_ptr<db::Cursor> cursor_;
  // With shuffle: every key, the walk over them, and whether the cursor is
  // at the walk's record yet.
  uint64_t shuffle_seed_ = 0;
  std::vector<std::string> keys_;
  PassWalk walk_;
  bool positioned_ = true;
  BlockingQueue<std::shared_ptr<QueuePair>> new_pairs_;
  boost::mutex pairs_mutex_;
  std::vector<std::shared_ptr<QueuePair>> pairs_;
  std::set<int> claimed_ranks_;
  // Idle while the consumer's queue holds half its records or more.
  ProducerPriority priority_;
};

namespace {
boost::mutex& BodiesMutex() {
  static boost::mutex mutex;
  return mutex;
}
template <typename Body>
std::multimap<std::string, std::weak_ptr<Body>>& Bodies() {
  static std::multimap<std::string, std::weak_ptr<Body>> bodies;
  return bodies;
}
}  // namespace

DataReader::QueuePair::QueuePair(int rank_, uint64_t capacity_, const std::string& name)
    : rank(rank_),
      capacity(capacity_),
      free(name + " (free records)", false),
      full(name + " (records read)") {}

DataRecord* DataReader::QueuePair::TakeFree() {
  DataRecord* record = nullptr;
  if (free.try_pop(&record)) return record;
  if (allocated < capacity) {
    ++allocated;
    return new DataRecord();
  }
  return free.pop();
}

DataReader::QueuePair::~QueuePair() {
  DataRecord* record;
  while (free.try_pop(&record)) delete record;
  while (full.try_pop(&record)) delete record;  // nullptr (failure marker) is fine
}

std::string DataReader::Key(const LayerParameter& param) {
  return DataSourceKey(param, param.data_param().source());
}

DataReader::DataReader(const LayerParameter& param, const DataReaderPosition* start) {
  const int batch = static_cast<int>(param.data_param().batch_size());
  const int prefetch = static_cast<int>(param.data_param().prefetch());
  CREMA_REQUIRE(batch > 0, "layer '" << param.name() << "' (" << param.type()
                                     << "): batch_size must be positive");
  // Only the training net runs in every solver; test nets exist in the root.
  const bool train = param.phase() == TRAIN;
  const int rank = train ? Context::solver_rank() : 0;
  const int solver_count = train ? Context::solver_count() : 1;
  const int local_count = train ? std::max(1, Context::local_solver_count()) : 1;
  // Reachable from Python (set_solver_count, set_solver_rank): a rank no
  // round of the reader serves would wait for records forever.
  CREMA_REQUIRE(rank >= 0 && rank < solver_count,
                "layer '" << param.name() << "' (" << param.type() << "): solver rank " << rank
                          << " is outside [0, solver count " << solver_count << ")");
  const int first_local = rank / local_count * local_count;
  const uint64_t capacity =
      static_cast<uint64_t>(batch) * static_cast<uint64_t>(std::max(prefetch, 1));
  queue_pair_.reset(new QueuePair(rank, capacity, "layer '" + param.name() + "'"));
  boost::mutex::scoped_lock lock(BodiesMutex());
  key_ = Key(param);
  auto& bodies = Bodies<Body>();
  for (auto it = bodies.lower_bound(key_); it != bodies.upper_bound(key_) && !body_; ++it) {
    std::shared_ptr<Body> body = it->second.lock();
    if (body && body->Claim(rank, solver_count)) body_ = body;
  }
  if (!body_) {
    body_.reset(new Body(param, solver_count, first_local, local_count, start));
    body_->Claim(rank, solver_count);
    bodies.emplace(key_, body_);
  }
  body_->Register(queue_pair_);
}

DataReader::~DataReader() {
  boost::mutex::scoped_lock lock(BodiesMutex());
  body_.reset();  // the last reader of a source stops (joins) its body here
  auto& bodies = Bodies<Body>();
  for (auto it = bodies.begin(); it != bodies.end();) {
    it = it->second.expired() ? bodies.erase(it) : std::next(it);
  }
}

uint64_t DataReader::records_read() const { return queue_pair_->records.load(); }

uint64_t DataReader::start_position() const { return body_->start_position(); }

uint64_t DataReader::start_batches() const { return body_->start_batches(); }

int DataReader::solver_count() const { return body_->solver_count(); }

bool DataReader::shuffles() const { return body_->shuffles(); }

uint64_t DataReader::shuffle_seed() const { return body_->shuffle_seed(); }

std::string DataReader::failure_message() const { return body_->failure_message(); }

void DataReader::Hurry() const { body_->Hurry(); }

size_t DataReader::live_bodies() {
  boost::mutex::scoped_lock lock(BodiesMutex());
  size_t live = 0;
  for (const auto& entry : Bodies<Body>()) live += entry.second.expired() ? 0 : 1;
  return live;
}

}  // namespace crema
