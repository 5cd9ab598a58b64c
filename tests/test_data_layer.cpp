// The prefetching Data layer: it serves batches in database order across the
// wrap-around (or shuffled per pass), per-solver slices, leaves no thread behind when destroyed
// mid-prefetch, and refuses records of another shape by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/thread.hpp>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "crema/data/data_layer.hpp"
#include "crema/util/db.hpp"
#include "data_test_util.hpp"
#include "eventually.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// The reader's fixture: its LMDBs and Data layer parameters.
class DataLayerTest : public DataReaderTest {};

template <typename Dtype>
std::vector<int> Labels(const Blob<Dtype>& blob) {
  std::vector<int> labels;
  for (int i = 0; i < blob.count(); ++i) labels.push_back(static_cast<int>(blob.cpu_data()[i]));
  return labels;
}

TEST_F(DataLayerTest, ServesBatchesInOrderAcrossWrapAround) {
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

TEST_F(DataLayerTest, PerSolverSlices) {
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

// data_param.shuffle (NVCaffe's, Intel's, TSN's field): each pass serves every
// record once, pass 0 in an order of its own and each later pass in
// another; the data travels with its label.
TEST_F(DataLayerTest, ShuffleServesEveryRecordOncePerPassInOrdersOfTheirOwn) {
  const int count = 20, batch = 4;
  LayerParameter param = DataParam(MakeDB(count), batch);
  param.mutable_data_param()->set_shuffle(true);
  DataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  std::vector<std::vector<int>> passes(3);
  for (auto& pass : passes) {
    while (pass.size() < static_cast<size_t>(count)) {
      layer.Forward(bottom, top);
      for (int i = 0; i < batch; ++i) {
        EXPECT_EQ(data.cpu_data()[4 * i], label.cpu_data()[i]);  // pixel 0 is the index
      }
      for (int value : Labels(label)) pass.push_back(value);
    }
  }
  std::vector<int> in_order(count);
  std::iota(in_order.begin(), in_order.end(), 0);
  for (size_t p = 0; p < passes.size(); ++p) {
    std::vector<int> sorted = passes[p];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, in_order) << "pass " << p << " serves each record once";
  }
  EXPECT_NE(passes[0], in_order) << "the first pass is shuffled too";
  EXPECT_NE(passes[1], passes[0]);
  EXPECT_NE(passes[2], passes[1]);
}

// Two solvers of a shuffling reader: disjoint slices that together make
// each pass.
TEST_F(DataLayerTest, ShuffledSolverSlicesShareEachPass) {
  const std::string source = MakeDB(8);
  Context::set_solver_count(2);
  Context::set_local_solver_count(2);
  std::vector<std::unique_ptr<DataLayer<float>>> layers;
  std::vector<std::unique_ptr<Blob<float>>> blobs;
  std::vector<std::vector<Blob<float>*>> tops(2);
  std::vector<Blob<float>*> bottom;
  for (int rank = 0; rank < 2; ++rank) {
    Context::set_solver_rank(rank);
    LayerParameter param = DataParam(source, 2);
    param.mutable_data_param()->set_shuffle(true);
    layers.emplace_back(new DataLayer<float>(param));
    blobs.emplace_back(new Blob<float>());
    blobs.emplace_back(new Blob<float>());
    tops[rank] = {blobs[2 * rank].get(), blobs[2 * rank + 1].get()};
  }
  boost::thread other([&] {
    Context::set_solver_count(2);
    Context::set_local_solver_count(2);
    Context::set_solver_rank(1);
    layers[1]->SetUp(bottom, tops[1]);
  });
  Context::set_solver_rank(0);
  layers[0]->SetUp(bottom, tops[0]);
  other.join();
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<int> seen;
    for (int step = 0; step < 2; ++step) {
      for (int rank = 0; rank < 2; ++rank) {
        layers[rank]->Forward(bottom, tops[rank]);
        for (int value : Labels(*tops[rank][1])) seen.push_back(value);
      }
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7})) << "pass " << pass;
  }
}

TEST_F(DataLayerTest, DestroyingMidPrefetchLeavesNoThread) {
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

// Counts read from the file are bounded before memory is taken: a prefetch
// depth above the limit is refused by name, and a batch size whose blob
// cannot exist is refused by the blob's limit with records made only as the
// reader reaches them (not batch_size x prefetch of them up front).
TEST_F(DataLayerTest, PrefetchAboveTheLimitIsAUserError) {
  LayerParameter param = DataParam(MakeDB(4), 2, "deep");
  param.mutable_data_param()->set_prefetch(kMaxPrefetchBatches + 1);
  try {
    DataLayer<float> layer(param);
    FAIL() << "a prefetch depth above the limit must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'deep'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("prefetch"), std::string::npos) << e.what();
  }
}

TEST_F(DataLayerTest, BatchTooLargeForABlobIsAUserErrorAndStopsTheReader) {
  LayerParameter param = DataParam(MakeDB(4), 1 << 30, "huge");
  {
    DataLayer<float> layer(param);
    Blob<float> data, label;
    std::vector<Blob<float>*> bottom, top{&data, &label};
    EXPECT_THROW(layer.SetUp(bottom, top), Error);
  }
  EXPECT_EQ(DataReader::live_bodies(), 0u);
}

TEST_F(DataLayerTest, RecordOfAnotherShapeIsAUserError) {
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
TEST_F(DataLayerTest, RecordOfTheSameSizeInAnotherShapeIsAUserError) {
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
