// The data pipeline's threads: the shared reader deals disjoint slices in a
// fixed order, wraps around, stops while its consumers are blocked, and the
// prefetching Data layer serves batches in database order and leaves no
// thread behind when the net goes away.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <boost/thread.hpp>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "crema/data_reader.hpp"
#include "crema/layers/data_layer.hpp"
#include "crema/util/db.hpp"
#include "crema/util/producer_priority.hpp"
#include "eventually.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

// A database of `count` 1x2x2 records whose label is their index.
class DataReaderTest : public ScratchDirTest {
 protected:
  void TearDown() override {
    Context::set_solver_count(1);
    Context::set_local_solver_count(1);
    Context::set_solver_rank(0);
    ScratchDirTest::TearDown();
  }
  std::string MakeDB(int count) {
    const std::string source = dir_ + "/db" + std::to_string(count);
    WriteDatumLMDB(
        source, count, 2, 2, [](int i, int) { return i % 256; }, [](int i) { return i; });
    return source;
  }
  LayerParameter DataParam(const std::string& source, int batch, const std::string& name = "data") {
    LayerParameter param;
    param.set_name(name);
    param.set_type("Data");
    param.set_phase(TRAIN);
    param.mutable_data_param()->set_source(source);
    param.mutable_data_param()->set_batch_size(batch);
    param.mutable_data_param()->set_backend(DataParameter::LMDB);
    return param;
  }
  static int TakeLabel(DataReader* reader) {
    DataRecord* record = reader->full().pop();
    const int label = record->datum.label();
    reader->free().push(record);
    return label;
  }
};

TEST_F(DataReaderTest, OneSolverReadsInOrderAndWraps) {
  const std::string source = MakeDB(5);
  DataReader reader(DataParam(source, 2));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(TakeLabel(&reader), i % 5);
  EXPECT_GE(reader.records_read(), 12u);
}

TEST_F(DataReaderTest, SolversReadDisjointInterleavedSlices) {
  const std::string source = MakeDB(12);
  constexpr int kSolvers = 3;
  Context::set_solver_count(kSolvers);
  Context::set_local_solver_count(kSolvers);
  // Registered out of rank order: dealing still follows the ranks.
  std::vector<std::unique_ptr<DataReader>> readers(kSolvers);
  for (int rank : {2, 0, 1}) {
    Context::set_solver_rank(rank);
    readers[rank].reset(new DataReader(DataParam(source, 2)));
  }
  EXPECT_EQ(DataReader::live_bodies(), 1u);  // one database cursor for all
  std::set<int> seen;
  for (int rank = 0; rank < kSolvers; ++rank) {
    for (int k = 0; k < 4; ++k) {
      const int label = TakeLabel(readers[rank].get());
      EXPECT_EQ(label, k * kSolvers + rank) << "rank " << rank;
      seen.insert(label);
    }
  }
  EXPECT_EQ(seen.size(), 12u);  // together they cover the database once
}

// Two processes of two solvers each (MPI): this process runs ranks 2 and 3,
// and its reader skips the records of ranks 0 and 1.
TEST_F(DataReaderTest, ProcessReadsOnlyItsSolversRecords) {
  const std::string source = MakeDB(12);
  Context::set_solver_count(4);
  Context::set_local_solver_count(2);
  std::vector<std::unique_ptr<DataReader>> readers;
  for (int rank : {2, 3}) {
    Context::set_solver_rank(rank);
    readers.emplace_back(new DataReader(DataParam(source, 2)));
  }
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(TakeLabel(readers[0].get()), 4 * round + 2);
    EXPECT_EQ(TakeLabel(readers[1].get()), 4 * round + 3);
  }
}

TEST_F(DataReaderTest, SeparateSourcesGetSeparateBodies) {
  const std::string a = MakeDB(3), b = MakeDB(4);
  DataReader reader_a(DataParam(a, 1, "a")), reader_b(DataParam(b, 1, "b"));
  EXPECT_EQ(DataReader::live_bodies(), 2u);
  EXPECT_EQ(TakeLabel(&reader_a), 0);
  EXPECT_EQ(TakeLabel(&reader_b), 0);
}

// Two nets of one solver over one source (built side by side from Python,
// say): each reads the whole database in order, neither waits on the other.
TEST_F(DataReaderTest, TwoLoneReadersOfOneSourceEachReadEverything) {
  const std::string source = MakeDB(4);
  DataReader first(DataParam(source, 1)), second(DataParam(source, 1));
  EXPECT_EQ(DataReader::live_bodies(), 2u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(TakeLabel(&second), i % 4);
    EXPECT_EQ(TakeLabel(&first), i % 4);
  }
}

TEST_F(DataReaderTest, StopsWhileBlockedOnAFullPipeline) {
  const std::string source = MakeDB(20);
  std::unique_ptr<DataReader> reader(new DataReader(DataParam(source, 1)));
  // Take records and never hand them back: the reader runs out of free
  // records and blocks. Destroying it must still return promptly.
  std::vector<DataRecord*> held;
  for (int i = 0; i < 4; ++i) held.push_back(reader->full().pop());  // 1 x prefetch 4
  // The reader counts a wait when it finds no free record, then blocks.
  ASSERT_TRUE(Eventually([&] { return reader->free().starved_count() >= 1; },
                         "the reader to block on its free records"));
  for (DataRecord* record : held) reader->free().push(record);
  reader.reset();
  EXPECT_EQ(DataReader::live_bodies(), 0u);
}

TEST_F(DataReaderTest, StopsWhileConsumerAndReaderAreBlocked) {
  const std::string source = MakeDB(20);
  Context::set_solver_count(2);
  Context::set_local_solver_count(2);
  Context::set_solver_rank(0);
  // Only one of two solvers registers: after rank 0's first record the
  // reader waits for rank 1, and the consumer (a prefetch thread, say) waits
  // for rank 0's second record. Both must stop.
  std::unique_ptr<DataReader> reader(new DataReader(DataParam(source, 1)));
  std::atomic<bool> interrupted{false}, second_pop{false};
  std::atomic<size_t> waits_before_second_pop{0};
  BlockingQueue<DataRecord*>& full = reader->full();
  BlockingQueue<DataRecord*>& recycled = reader->free();
  boost::thread consumer([&] {
    try {
      recycled.push(full.pop());
      waits_before_second_pop = full.starved_count();
      second_pop = true;
      full.pop();
    } catch (const boost::thread_interrupted&) {
      interrupted = true;
    }
  });
  ASSERT_TRUE(
      Eventually([&] { return second_pop && full.starved_count() > waits_before_second_pop; },
                 "the consumer to block on its second record"));
  consumer.interrupt();  // consumers stop first, as a data layer stops its thread
  consumer.join();
  reader.reset();
  EXPECT_TRUE(interrupted);
  EXPECT_EQ(DataReader::live_bodies(), 0u);
}

TEST_F(DataReaderTest, MissingDatabaseNamesLayerAndPath) {
  try {
    DataReader reader(DataParam(dir_ + "/missing", 1, "mnist"));
    FAIL() << "a missing database must be refused";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("mnist"), std::string::npos) << message;
    EXPECT_NE(message.find(dir_ + "/missing"), std::string::npos) << message;
  }
}

template <typename Dtype>
std::vector<int> Labels(const Blob<Dtype>& blob) {
  std::vector<int> labels;
  for (int i = 0; i < blob.count(); ++i) labels.push_back(static_cast<int>(blob.cpu_data()[i]));
  return labels;
}

// The threads of this process at the idle priority (ProducerPriority).
int IdleThreads() {
  int idle = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return -1;
  while (dirent* task = readdir(tasks)) {
    const int id = std::atoi(task->d_name);
    if (id > 0 && sched_getscheduler(id) == SCHED_IDLE) ++idle;
  }
  closedir(tasks);
  return idle;
}

// Once the pipeline is full, the reader and the prefetch thread wait at the
// idle priority (they are ahead of the net); a consumer that finds the
// records queue empty brings the reader back to normal priority.
TEST_F(DataReaderTest, PipelineAheadOfTheNetRunsAtIdlePriority) {
  if (!ProducerPriority::Supported()) {
    GTEST_SKIP() << "this process may not leave the idle priority: data threads keep normal "
                    "priority";
  }
  const std::string source = MakeDB(40);
  ASSERT_EQ(IdleThreads(), 0);
  {
    DataLayer<float> layer(DataParam(source, 2));
    Blob<float> data, label;
    std::vector<Blob<float>*> bottom, top{&data, &label};
    layer.SetUp(bottom, top);
    EXPECT_TRUE(Eventually([] { return IdleThreads() == 2; }, "reader and prefetch to idle"));
    layer.Forward(bottom, top);  // the batches go on in order
    EXPECT_EQ(static_cast<int>(label.cpu_data()[0]), 0);
  }
  EXPECT_EQ(IdleThreads(), 0);  // gone with the layer
  DataReader reader(DataParam(source, 2));
  ASSERT_TRUE(Eventually([] { return IdleThreads() == 1; }, "a full reader to idle"));
  std::vector<DataRecord*> taken;
  DataRecord* record = nullptr;
  while (reader.full().try_pop(&record)) taken.push_back(record);
  reader.Hurry();
  EXPECT_EQ(IdleThreads(), 0);
  for (DataRecord* r : taken) reader.free().push(r);
  EXPECT_TRUE(Eventually([] { return IdleThreads() == 1; }, "the refilled reader to idle"));
}

TEST_F(DataReaderTest, DataLayerServesBatchesInOrderAcrossWrapAround) {
  const std::string source = MakeDB(7);
  LayerParameter param = DataParam(source, 3);
  param.mutable_transform_param()->set_scale(0.5);
  DataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  EXPECT_EQ(data.shape(), (std::vector<int>{3, 1, 2, 2}));
  EXPECT_EQ(label.shape(), (std::vector<int>{3}));
  for (int step = 0; step < 5; ++step) {
    layer.Forward(bottom, top);
    for (int i = 0; i < 3; ++i) {
      const int expected = (step * 3 + i) % 7;
      EXPECT_EQ(static_cast<int>(label.cpu_data()[i]), expected) << "step " << step;
      EXPECT_EQ(data.cpu_data()[4 * i], 0.5f * expected);
    }
  }
}

TEST_F(DataReaderTest, DataLayerPerSolverSlices) {
  const std::string source = MakeDB(8);
  Context::set_solver_count(2);
  Context::set_local_solver_count(2);
  std::vector<std::unique_ptr<DataLayer<float>>> layers;
  std::vector<std::unique_ptr<Blob<float>>> blobs;
  std::vector<std::vector<Blob<float>*>> tops(2);
  for (int rank = 0; rank < 2; ++rank) {
    Context::set_solver_rank(rank);
    layers.emplace_back(new DataLayer<float>(DataParam(source, 2)));
    blobs.emplace_back(new Blob<float>());
    blobs.emplace_back(new Blob<float>());
    tops[rank] = {blobs[2 * rank].get(), blobs[2 * rank + 1].get()};
  }
  std::vector<Blob<float>*> bottom;
  // Set up from two threads at once, as solver threads do: each layer joins
  // the reader with the rank of the thread that sets it up.
  boost::thread other([&] {
    Context::set_solver_count(2);
    Context::set_local_solver_count(2);
    Context::set_solver_rank(1);
    layers[1]->SetUp(bottom, tops[1]);
  });
  Context::set_solver_rank(0);
  layers[0]->SetUp(bottom, tops[0]);
  other.join();
  for (int step = 0; step < 3; ++step) {
    layers[0]->Forward(bottom, tops[0]);
    layers[1]->Forward(bottom, tops[1]);
    EXPECT_EQ(Labels(*tops[0][1]), (std::vector<int>{(4 * step) % 8, (4 * step + 2) % 8}));
    EXPECT_EQ(Labels(*tops[1][1]), (std::vector<int>{(4 * step + 1) % 8, (4 * step + 3) % 8}));
  }
}

TEST_F(DataReaderTest, DestroyingMidPrefetchLeavesNoThread) {
  const std::string source = MakeDB(50);
  for (int round = 0; round < 5; ++round) {
    LayerParameter param = DataParam(source, 4);
    param.mutable_data_param()->set_prefetch(3);
    auto layer = std::unique_ptr<DataLayer<float>>(new DataLayer<float>(param));
    Blob<float> data, label;
    std::vector<Blob<float>*> bottom, top{&data, &label};
    layer->SetUp(bottom, top);
    if (round % 2) layer->Forward(bottom, top);
    layer.reset();  // prefetch thread and reader stop here
    EXPECT_EQ(DataReader::live_bodies(), 0u);
  }
}

TEST_F(DataReaderTest, RecordOfAnotherShapeIsAUserError) {
  const std::string source = dir_ + "/mixed";
  {
    auto db = db::GetDB("lmdb");
    db->Open(source, db::NEW);
    auto txn = db->NewTransaction();
    for (int i = 0; i < 4; ++i) {
      Datum datum;
      datum.set_channels(1);
      datum.set_height(i == 2 ? 3 : 2);
      datum.set_width(2);
      datum.set_data(std::string(datum.height() * 2, 'x'));
      std::string value;
      datum.SerializeToString(&value);
      txn->Put("k" + std::to_string(i), value);
    }
    txn->Commit();
  }
  DataLayer<float> layer(DataParam(source, 4, "mixed"));
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  try {
    layer.Forward(bottom, top);
    FAIL() << "a record of another shape must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mixed"), std::string::npos) << e.what();
  }
}

// A record of the first one's size in another shape (3 x 2 after 2 x 3) was
// written into the batch and read across rows, silently.
TEST_F(DataReaderTest, RecordOfTheSameSizeInAnotherShapeIsAUserError) {
  const std::string source = dir_ + "/turned";
  {
    auto db = db::GetDB("lmdb");
    db->Open(source, db::NEW);
    auto txn = db->NewTransaction();
    for (int i = 0; i < 4; ++i) {
      Datum datum;
      datum.set_channels(1);
      datum.set_height(i == 2 ? 3 : 2);
      datum.set_width(i == 2 ? 2 : 3);
      datum.set_data(std::string(6, 'x'));
      txn->Put("k" + std::to_string(i), datum.SerializeAsString());
    }
    txn->Commit();
  }
  DataLayer<float> layer(DataParam(source, 4, "turned"));
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  try {
    layer.Forward(bottom, top);
    FAIL() << "a 3 x 2 record in a batch of 2 x 3 must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("record 'k2'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("transforms to 1 x 3 x 2, the first record to 1 x 2 x 3"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace crema
