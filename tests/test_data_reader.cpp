// The shared reader's thread: it deals disjoint slices in a fixed order,
// wraps around, and stops while its consumers are blocked.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <boost/thread.hpp>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "crema/data/data_layer.hpp"
#include "crema/data_reader.hpp"
#include "crema/util/db.hpp"
#include "crema/util/producer_priority.hpp"
#include "data_test_util.hpp"
#include "eventually.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

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

}  // namespace
}  // namespace crema
