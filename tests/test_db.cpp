// Databases: LMDB and LevelDB write and read back in key order; a missing or
// malformed database is an error naming the path; BVLC Caffe's LMDB (in a
// read-only folder) reads as is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crema/data/converters/convert_mnist.hpp"
#include "crema/storage/lmdb_reader.hpp"
#include "crema/util/db.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

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

// Seek finds a record by its key in both backends, through the reading
// cursor and (LMDB) the writing one; Next goes on in key order from it; a
// key the database lacks is an Error naming it.
TEST_P(DBTest, SeekFindsARecordByItsKey) {
  WriteRecords(50);
  for (const db::Mode mode : {db::READ, db::WRITE}) {
    SCOPED_TRACE(mode == db::READ ? "READ" : "WRITE");
    auto db = db::GetDB(GetParam());
    db->Open(source_, mode);
    auto cursor = db->NewCursor();
    for (int i : {37, 0, 49, 12, 13, 37}) {
      char key[16];
      snprintf(key, sizeof(key), "%08d", i);
      cursor->Seek(key);
      ASSERT_TRUE(cursor->valid());
      EXPECT_EQ(cursor->key(), key);
      EXPECT_EQ(cursor->value(), "value" + std::to_string(i));
    }
    cursor->Next();
    EXPECT_EQ(cursor->value(), "value38");
    for (const char* missing : {"00000012x", "0000001", "", "99999999"}) {
      const std::string message = ErrorMessageOf([&] { cursor->Seek(missing); });
      EXPECT_NE(message.find(std::string("'") + missing + "'"), std::string::npos) << message;
    }
    cursor.reset();  // before the database closes
    db->Close();
  }
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
  CREMA_REQUIRE_COMPAT();
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
  CREMA_REQUIRE_COMPAT();
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

namespace crema {
namespace {

// The LMDB reader checks every page against the meta pages: databases that
// liblmdb writes read back exactly; cut short, corrupted or rewired by hand
// they give an Error naming the file, or records, but never a crash or a hang.
class LmdbReaderTest : public ::testing::Test {
 protected:
  using Records = std::vector<std::pair<std::string, std::string>>;

  void SetUp() override {
    char pattern[] = "/tmp/crema_lmdb_reader_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    source_ = dir_ + "/db";
    data_file_ = source_ + "/data.mdb";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Keys "00000000".."count-1", each value `value_size(i)` bytes that name i.
  static Records Numbered(int count, const std::function<size_t(int)>& value_size) {
    Records records;
    for (int i = 0; i < count; ++i) {
      char key[16];
      snprintf(key, sizeof(key), "%08d", i);
      std::string value = std::to_string(i) + ":";
      value.resize(value_size(i), static_cast<char>('a' + i % 26));
      records.emplace_back(key, value);
    }
    return records;
  }
  // Writes the records, last first, in transactions of `batch` puts.
  void Write(const Records& records, size_t batch = 1000) {
    auto db = db::GetDB("lmdb");
    db->Open(source_, db::NEW);
    auto txn = db->NewTransaction();
    for (size_t i = 0; i < records.size(); ++i) {
      const auto& record = records[records.size() - 1 - i];
      txn->Put(record.first, record.second);
      if ((i + 1) % batch == 0) txn->Commit();
    }
    txn->Commit();
  }
  Records ReadAll() const {
    auto db = db::GetDB("lmdb");
    db->Open(source_, db::READ);
    auto cursor = db->NewCursor();
    Records records;
    for (; cursor->valid(); cursor->Next()) records.emplace_back(cursor->key(), cursor->value());
    return records;
  }
  db::LmdbMeta Meta() const { return db::LmdbFile(data_file_).meta(); }
  std::string Bytes() const {
    std::ifstream in(data_file_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  void SetBytes(const std::string& bytes) const {
    std::ofstream(data_file_, std::ios::binary | std::ios::trunc) << bytes;
  }
  // Overwrites bytes in place (cheaper than rewriting the file).
  void PatchBytes(size_t at, const std::string& bytes) const {
    std::fstream file(data_file_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(at);
    file.write(bytes.data(), bytes.size());
  }
  // The message of the Error that reading everything gives ("" if none).
  std::string ReadError() const {
    return ErrorMessageOf([this] { ReadAll(); });
  }
  void ExpectReadErrorSaying(const std::string& what) const {
    const std::string message = ReadError();
    EXPECT_NE(message.find(data_file_), std::string::npos) << "'" << message << "'";
    EXPECT_NE(message.find(what), std::string::npos) << "'" << message << "'";
  }

  std::string dir_, source_, data_file_;
};

// Offsets into a data file, from LMDB's documented layout.
constexpr size_t kLmdbNodeOffsets = 16;  // after the page header
constexpr size_t kLmdbMainDbFlags = 16 + 72 + 4, kLmdbMainDbDepth = 16 + 72 + 6,
                 kLmdbMainDbBranchPages = 16 + 72 + 8, kLmdbMainDbLeafPages = 16 + 72 + 16;

uint16_t LmdbU16(const std::string& bytes, size_t at) {
  uint16_t value;
  std::memcpy(&value, bytes.data() + at, sizeof(value));
  return value;
}
void SetLmdbU16(std::string* bytes, size_t at, uint16_t value) {
  std::memcpy(&(*bytes)[at], &value, sizeof(value));
}
// Where node `index` of page `pgno` starts in the file.
size_t LmdbNodeAt(const std::string& bytes, size_t page_size, uint64_t pgno, int index) {
  return pgno * page_size + LmdbU16(bytes, pgno * page_size + kLmdbNodeOffsets + 2 * index);
}
// Points node `index` of branch page `pgno` at page `child`.
void SetLmdbChild(std::string* bytes, size_t page_size, uint64_t pgno, int index, uint64_t child) {
  const size_t node = LmdbNodeAt(*bytes, page_size, pgno, index);
  SetLmdbU16(bytes, node, child & 0xffff);
  SetLmdbU16(bytes, node + 2, (child >> 16) & 0xffff);
  SetLmdbU16(bytes, node + 4, (child >> 32) & 0xffff);
}

TEST_F(LmdbReaderTest, ReadsBackASmallDatabase) {
  const Records records = Numbered(10, [](int i) { return 10 + i; });
  Write(records);
  EXPECT_EQ(ReadAll(), records);
}

TEST_F(LmdbReaderTest, ReadsBackATreeWithBranchPagesTwice) {
  const Records records = Numbered(30000, [](int) { return 100; });
  Write(records);
  const db::LmdbMeta meta = Meta();
  EXPECT_GE(meta.depth, 3) << "the test wants branch pages below the root";
  EXPECT_GE(meta.branch_pages, 2u);
  EXPECT_EQ(meta.entries, records.size());
  EXPECT_EQ(ReadAll(), records);
  auto db = db::GetDB("lmdb");
  db->Open(source_, db::READ);
  auto cursor = db->NewCursor();
  for (int pass = 0; pass < 2; ++pass, cursor->SeekToFirst()) {
    size_t count = 0;
    for (; cursor->valid(); cursor->Next()) ++count;
    EXPECT_EQ(count, records.size()) << "pass " << pass;
  }
}

TEST_F(LmdbReaderTest, ReadsValuesLargerThanAPage) {
  const std::vector<size_t> sizes = {0,    1,     2000,  4000,   4080,    4096,
                                     4097, 10000, 65536, 100000, 1 << 20, 7};
  const Records records = Numbered(sizes.size(), [&](int i) { return sizes[i]; });
  Write(records, 3);
  EXPECT_GT(Meta().overflow_pages, 256u);
  EXPECT_EQ(ReadAll(), records);
}

// Seek descends the branch pages to every key, in any order and as often as
// asked (each descent has bounds of its own), values on overflow pages
// included; walking the keys alone reads no overflow page.
TEST_F(LmdbReaderTest, SeeksEveryKeyOfATreeWithBranchPages) {
  Records records = Numbered(30000, [](int i) { return i % 1000 == 0 ? 9000 : 100; });
  Write(records);
  ASSERT_GE(Meta().depth, 3);
  auto db = db::GetDB("lmdb");
  db->Open(source_, db::READ);
  auto cursor = db->NewCursor();
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < records.size(); ++i) {
      const auto& record = records[(i * 7919 + round) % records.size()];
      cursor->Seek(record.first);
      ASSERT_TRUE(cursor->valid());
      ASSERT_EQ(cursor->value(), record.second);
    }
  }
  cursor->Seek(records.back().first);
  cursor->Next();
  EXPECT_FALSE(cursor->valid());
}

TEST_F(LmdbReaderTest, WalkingKeysLeavesOverflowPagesUnread) {
  Write(Numbered(20, [](int i) { return i == 5 ? 20000 : 10; }));
  const db::LmdbMeta meta = Meta();
  ASSERT_GT(meta.overflow_pages, 1u);
  // Break the overflow run's first page (its flags say branch): only the
  // value of record 5 reads it.
  std::string bytes = Bytes();
  bool broken = false;
  for (uint64_t pgno = 2; pgno <= meta.last_page && !broken; ++pgno) {
    const size_t flags = pgno * meta.page_size + 10;  // after pgno and pad
    if ((LmdbU16(bytes, flags) & 0x7) != 0x4) continue;
    SetLmdbU16(&bytes, flags, 0x1);
    broken = true;
  }
  ASSERT_TRUE(broken);
  SetBytes(bytes);
  auto db = db::GetDB("lmdb");
  db->Open(source_, db::READ);
  auto cursor = db->NewCursor();
  size_t keys = 0;
  for (; cursor->valid(); cursor->Next()) ++keys;
  EXPECT_EQ(keys, 20u);
  cursor->Seek("00000004");
  EXPECT_EQ(cursor->value().size(), 10u);
  cursor->Seek("00000005");
  const std::string message = ErrorMessageOf([&] { cursor->value(); });
  EXPECT_NE(message.find("expected an overflow page"), std::string::npos) << message;
}

TEST_F(LmdbReaderTest, EmptyDatabaseIteratesNothing) {
  Write({});
  EXPECT_EQ(Meta().entries, 0u);
  auto db = db::GetDB("lmdb");
  db->Open(source_, db::READ);
  auto cursor = db->NewCursor();
  EXPECT_FALSE(cursor->valid());
  cursor->Next();
  cursor->SeekToFirst();
  EXPECT_FALSE(cursor->valid());
}

TEST_F(LmdbReaderTest, TruncatedFileIsAnErrorNamingIt) {
  Write(Numbered(3000, [](int i) { return i % 500 == 0 ? 9000 : 300; }), 700);
  const std::string full = Bytes();
  const size_t page = Meta().page_size;
  ASSERT_GT(full.size(), 100 * page);
  for (size_t cut : {size_t(0), size_t(100), page - 1, page + 100, 2 * page, full.size() / 2,
                     full.size() - page, full.size() - 1}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    SetBytes(full.substr(0, cut));
    ExpectReadErrorSaying(cut < 2 * page ? "short" : "truncated");
  }
  SetBytes(full);
  EXPECT_EQ(ReadError(), "");
}

// Every byte of the meta pages and bytes all over the rest, each set to a few
// patterns: reading everything must end in records or an Error (ASan checks
// that no read strays).
TEST_F(LmdbReaderTest, CorruptBytesGiveRecordsOrAnError) {
  Write(Numbered(400, [](int i) { return i % 40 == 0 ? 6000 : 150 + i % 50; }), 150);
  const std::string intact = Bytes();
  const size_t page = Meta().page_size;
  std::vector<size_t> offsets;
  for (size_t at = 0; at < 152; ++at) offsets.insert(offsets.end(), {at, page + at});
  for (size_t at = 2 * page; at < intact.size(); at += 97) offsets.push_back(at);
  int errors = 0, complete = 0;
  for (size_t at : offsets) {
    const std::string original = intact.substr(at, 2);
    for (int pattern = 0; pattern < 4; ++pattern) {
      std::string changed = original;
      if (pattern < 2) changed[0] ^= pattern == 0 ? 0x01 : 0x80;
      if (pattern >= 2) changed.assign(original.size(), pattern == 2 ? '\xff' : '\0');
      PatchBytes(at, changed);
      const std::string message = ReadError();
      if (message.empty()) {
        ++complete;
      } else {
        ++errors;
        ASSERT_NE(message.find(data_file_), std::string::npos)
            << "byte " << at << ", pattern " << pattern << ": " << message;
      }
    }
    PatchBytes(at, original);
  }
  EXPECT_GT(errors, 100);
  EXPECT_GT(complete, 100);  // a changed value byte reads as a changed value
}

class LmdbRewiredTreeTest : public LmdbReaderTest {
 protected:
  void SetUp() override {
    LmdbReaderTest::SetUp();
    Write(Numbered(600, [](int) { return 100; }));
    meta_ = Meta();
    ASSERT_EQ(meta_.depth, 2) << "the test wants one branch page over leaves";
    bytes_ = Bytes();
  }
  // Sets a field of the main database's record in both meta pages.
  void SetInMetas(size_t at, uint16_t value) {
    SetLmdbU16(&bytes_, at, value);
    SetLmdbU16(&bytes_, meta_.page_size + at, value);
  }

  db::LmdbMeta meta_;
  std::string bytes_;
};

TEST_F(LmdbRewiredTreeTest, ChildPointingAtTheRootIsAnError) {
  SetLmdbChild(&bytes_, meta_.page_size, meta_.root, 1, meta_.root);
  SetBytes(bytes_);
  ExpectReadErrorSaying("page " + std::to_string(meta_.root) + ": expected a leaf page");
}

TEST_F(LmdbRewiredTreeTest, SharedLeafIsAnError) {
  const size_t node = LmdbNodeAt(bytes_, meta_.page_size, meta_.root, 0);
  const uint64_t leaf = LmdbU16(bytes_, node) | uint64_t(LmdbU16(bytes_, node + 2)) << 16;
  SetLmdbChild(&bytes_, meta_.page_size, meta_.root, 1, leaf);
  SetBytes(bytes_);
  ExpectReadErrorSaying("does not follow the previous key");
}

TEST_F(LmdbRewiredTreeTest, ChildPointingAtAMetaPageIsAnError) {
  SetLmdbChild(&bytes_, meta_.page_size, meta_.root, 2, 1);
  SetBytes(bytes_);
  ExpectReadErrorSaying("page " + std::to_string(meta_.root) + ": node 2 points to page 1");
}

TEST_F(LmdbRewiredTreeTest, ChildBeyondTheLastPageIsAnError) {
  SetLmdbChild(&bytes_, meta_.page_size, meta_.root, 0, uint64_t(1) << 40);
  SetBytes(bytes_);
  ExpectReadErrorSaying("not a data page");
}

TEST_F(LmdbRewiredTreeTest, MetaDepthDeeperThanTheTreeIsAnError) {
  SetInMetas(kLmdbMainDbDepth, 3);
  // Counts that fit the file: one more branch page, one fewer leaf.
  SetInMetas(kLmdbMainDbBranchPages, meta_.branch_pages + 1);
  SetInMetas(kLmdbMainDbLeafPages, meta_.leaf_pages - 1);
  SetBytes(bytes_);
  ExpectReadErrorSaying("expected a branch page at depth 2 of 3");
}

TEST_F(LmdbRewiredTreeTest, DuplicateKeysAreNotSupported) {
  SetInMetas(kLmdbMainDbFlags, 0x04);  // MDB_DUPSORT
  SetBytes(bytes_);
  ExpectReadErrorSaying("not supported");
}

TEST_F(LmdbRewiredTreeTest, NamedSubDatabasesAreNotSupported) {
  const size_t node = LmdbNodeAt(bytes_, meta_.page_size, meta_.root, 0);
  const uint64_t leaf = LmdbU16(bytes_, node) | uint64_t(LmdbU16(bytes_, node + 2)) << 16;
  SetLmdbU16(&bytes_, LmdbNodeAt(bytes_, meta_.page_size, leaf, 0) + 4, 0x02);  // F_SUBDATA
  SetBytes(bytes_);
  ExpectReadErrorSaying("not supported");
}

TEST_F(LmdbRewiredTreeTest, WriteModeRefusesATruncatedFile) {
  SetBytes(bytes_.substr(0, bytes_.size() / 2));
  auto db = db::GetDB("lmdb");
  const std::string message = ErrorMessageOf([&] { db->Open(source_, db::WRITE); });
  EXPECT_NE(message.find(data_file_), std::string::npos) << "'" << message << "'";
}

// LevelDB checks its own files: a garbled or cut table is an error naming the
// database, at open or while iterating, never records that quietly stop.
class LevelDBCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/crema_leveldb_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    source_ = dir_ + "/db";
    {
      auto db = db::GetDB("leveldb");
      db->Open(source_, db::NEW);
      auto txn = db->NewTransaction();
      for (int i = 0; i < 20000; ++i) txn->Put(std::to_string(1000000 + i), std::string(100, 'v'));
      txn->Commit();
    }
    // Reopening turns the log into a table file.
    db::GetDB("leveldb")->Open(source_, db::READ);
    for (const auto& entry : std::filesystem::directory_iterator(source_)) {
      if (entry.path().extension() == ".ldb") table_ = entry.path().string();
    }
    ASSERT_FALSE(table_.empty()) << "no table file in " << source_;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::string ReadError() const {
    return ErrorMessageOf([this] {
      auto db = db::GetDB("leveldb");
      db->Open(source_, db::READ);
      for (auto cursor = db->NewCursor(); cursor->valid(); cursor->Next()) cursor->value();
    });
  }

  std::string dir_, source_, table_;
};

TEST_F(LevelDBCorruptionTest, GarbledTableIsAnErrorNamingThePath) {
  std::fstream table(table_, std::ios::in | std::ios::out | std::ios::binary);
  table.seekp(std::filesystem::file_size(table_) / 3);
  table << std::string(2000, '\xaa');
  table.close();
  EXPECT_NE(ReadError().find(source_), std::string::npos) << ReadError();
}

TEST_F(LevelDBCorruptionTest, TruncatedTableIsAnErrorNamingThePath) {
  std::filesystem::resize_file(table_, std::filesystem::file_size(table_) / 2);
  EXPECT_NE(ReadError().find(source_), std::string::npos) << ReadError();
}

TEST_F(LevelDBCorruptionTest, MissingTableIsAnErrorNamingThePath) {
  std::filesystem::remove(table_);
  EXPECT_NE(ReadError().find(source_), std::string::npos) << ReadError();
}

}  // namespace
}  // namespace crema
