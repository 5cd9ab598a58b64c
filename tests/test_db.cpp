// Databases: LMDB and LevelDB write and read back in key order; a missing or
// malformed database is an error naming the path; BVLC Caffe's LMDB (in a
// read-only folder) reads as is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>

#include "crema/util/convert_mnist.hpp"
#include "crema/util/db.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

class DBTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/crema_db_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    source_ = dir_ + "/db";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  void WriteRecords(int count) {
    auto db = db::GetDB(GetParam());
    db->Open(source_, db::NEW);
    auto txn = db->NewTransaction();
    for (int i = count - 1; i >= 0; --i) {  // written out of order on purpose
      char key[16];
      snprintf(key, sizeof(key), "%08d", i);
      txn->Put(key, "value" + std::to_string(i));
    }
    txn->Commit();
  }
  std::string dir_, source_;
};

TEST_P(DBTest, ReadsBackInKeyOrder) {
  WriteRecords(50);
  auto db = db::GetDB(GetParam());
  db->Open(source_, db::READ);
  auto cursor = db->NewCursor();
  int count = 0;
  for (; cursor->valid(); cursor->Next(), ++count) {
    char key[16];
    snprintf(key, sizeof(key), "%08d", count);
    EXPECT_EQ(cursor->key(), key);
    EXPECT_EQ(cursor->value(), "value" + std::to_string(count));
  }
  EXPECT_EQ(count, 50);
  cursor->SeekToFirst();
  EXPECT_EQ(cursor->value(), "value0");
}

TEST_P(DBTest, NewRefusesAnExistingDatabase) {
  WriteRecords(1);
  auto db = db::GetDB(GetParam());
  EXPECT_THROW(db->Open(source_, db::NEW), Error);
}

TEST_P(DBTest, MissingDatabaseNamesThePath) {
  auto db = db::GetDB(GetParam());
  try {
    db->Open(dir_ + "/nowhere", db::READ);
    FAIL() << "opening a missing database must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_ + "/nowhere"), std::string::npos) << e.what();
  }
}

TEST_P(DBTest, GarbageIsRefusedByPath) {
  ASSERT_EQ(mkdir(source_.c_str(), 0755), 0);
  const std::string junk = source_ + (GetParam() == "lmdb" ? "/data.mdb" : "/CURRENT");
  FILE* f = fopen(junk.c_str(), "w");
  fputs("this is not a database, just some bytes that are long enough to be read", f);
  fclose(f);
  auto db = db::GetDB(GetParam());
  try {
    db->Open(source_, db::READ);
    FAIL() << "a corrupt database must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(source_), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DBTest, ::testing::Values("lmdb", "leveldb"));

TEST(DBCompatTest, ReadsBvlcFashionTestLmdb) {
  auto db = db::GetDB("lmdb");
  db->Open(CompatDir() + "/fashion_test_lmdb", db::READ);  // a read-only folder
  auto cursor = db->NewCursor();
  std::map<int, int> per_label;
  int count = 0;
  for (; cursor->valid(); cursor->Next(), ++count) {
    Datum datum;
    ASSERT_TRUE(datum.ParseFromString(cursor->value()));
    ASSERT_EQ(datum.channels(), 1);
    ASSERT_EQ(datum.height(), 28);
    ASSERT_EQ(datum.width(), 28);
    ASSERT_EQ(datum.data().size(), 784u);
    per_label[datum.label()]++;
  }
  EXPECT_EQ(count, 10000);
  ASSERT_EQ(per_label.size(), 10u);
  for (const auto& entry : per_label) {
    EXPECT_GE(entry.first, 0);
    EXPECT_LE(entry.first, 9);
    EXPECT_EQ(entry.second, 1000) << "label " << entry.first;
  }
}

TEST(DBCompatTest, UnknownBackendIsAUserError) { EXPECT_THROW(db::GetDB("rocksdb"), Error); }

}  // namespace
}  // namespace crema

namespace crema {
namespace {

// Crema's converter and BVLC Caffe's write the same records from the same
// idx files: every key and every serialised Datum matches.
TEST(DBCompatTest, ConverterMatchesBvlcRecordForRecord) {
  const std::string raw = "/usr/share/datasets/fashion-mnist/";
  char pattern[] = "/tmp/crema_convert_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string ours = std::string(pattern) + "/test_lmdb";
  ConvertMnist(raw + "t10k-images-idx3-ubyte.gz", raw + "t10k-labels-idx1-ubyte.gz", ours, "lmdb");
  auto bvlc_db = db::GetDB("lmdb");
  bvlc_db->Open(CompatDir() + "/fashion_test_lmdb", db::READ);
  auto our_db = db::GetDB("lmdb");
  our_db->Open(ours, db::READ);
  auto bvlc = bvlc_db->NewCursor();
  auto mine = our_db->NewCursor();
  int count = 0;
  for (; bvlc->valid(); bvlc->Next(), mine->Next(), ++count) {
    ASSERT_TRUE(mine->valid()) << "ours ends after " << count << " records";
    ASSERT_EQ(mine->key(), bvlc->key());
    ASSERT_EQ(mine->value(), bvlc->value()) << "record " << bvlc->key();
  }
  EXPECT_FALSE(mine->valid());
  EXPECT_EQ(count, 10000);
  std::system((std::string("rm -rf ") + pattern).c_str());
}

TEST(DBCompatTest, ConverterRefusesWrongFiles) {
  const std::string raw = "/usr/share/datasets/fashion-mnist/";
  // Labels given as images: the magic number says so, naming the file.
  try {
    ConvertMnist(raw + "t10k-labels-idx1-ubyte.gz", raw + "t10k-labels-idx1-ubyte.gz",
                 "/tmp/crema_never_written", "lmdb");
    FAIL() << "a label file given as images must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t10k-labels-idx1-ubyte.gz"), std::string::npos);
  }
}

}  // namespace
}  // namespace crema
