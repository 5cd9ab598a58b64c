#include "crema/storage/lmdb_reader.hpp"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ios>
#include <string_view>
#include <utility>

namespace crema {
namespace db {
namespace {

// LMDB 0.9's on-disk format as its documentation gives it, for 64-bit builds
// (page numbers and transaction ids are size_t) in native byte order. The
// tests check it against files that liblmdb writes.
static_assert(sizeof(size_t) == 8, "this reader knows LMDB's 64-bit layout only");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "LMDB files are native-endian; the node layout here is little-endian's");

// A page header: page number u64, pad u16, flags u16, then either the bounds
// of the free space (lower u16: end of the node offsets, upper u16: start of
// the nodes) or, on the first page of an overflow run, the run's length u32.
constexpr size_t kPageHeaderSize = 16;
constexpr size_t kPageNumberAt = 0, kPageFlagsAt = 10, kLowerAt = 12, kUpperAt = 14;
constexpr size_t kOverflowCountAt = 12;
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kMeta = 0x08;
// The flags that say what a page is (the rest are liblmdb's bookkeeping).
constexpr uint16_t kPageKinds =
    kBranch | kLeaf | kOverflow | kMeta | 0x20 /* LEAF2 */ | 0x40 /* sub-page */;

// A node: lo u16 and hi u16 (the data size; in a branch, with the flags as
// bits 32..47, the child's page number), flags u16, key size u16, the key,
// then the data (a big value's first overflow page number, u64).
constexpr size_t kNodeHeaderSize = 8;
constexpr size_t kNodeLoAt = 0, kNodeHiAt = 2, kNodeFlagsAt = 4, kNodeKeySizeAt = 6;
constexpr uint16_t kBigData = 0x01, kSubData = 0x02, kDupData = 0x04;

// A meta page, after the page header: magic u32, version u32, address u64,
// map size u64, the free and the main database records, last page u64, txnid u64.
constexpr uint32_t kMagic = 0xBEEFC0DE, kVersion = 1;
constexpr size_t kMagicAt = 16, kVersionAt = 20, kFreeDbAt = 40, kMainDbAt = 88;
constexpr size_t kLastPageAt = 136, kTxnidAt = 144, kMetaEnd = 152;
// A database record: pad u32 (the free database's holds the page size),
// flags u16, depth u16, then u64 branch, leaf and overflow page counts,
// entries and the root page.
constexpr size_t kDbFlagsAt = 4, kDbDepthAt = 6, kDbBranchPagesAt = 8, kDbLeafPagesAt = 16,
                 kDbOverflowPagesAt = 24, kDbEntriesAt = 32, kDbRootAt = 40;

constexpr uint64_t kNoPage = ~uint64_t(0);  // the root of an empty database
constexpr uint64_t kFirstDataPage = 2;      // pages 0 and 1 are the meta pages
constexpr uint16_t kMaxDepth = 32;          // liblmdb's cursor stack: it writes no deeper tree
constexpr uint32_t kMinPageSize = 512, kMaxPageSize = 65536;
constexpr uint16_t kKnownDbFlags =
    MDB_REVERSEKEY | MDB_DUPSORT | MDB_INTEGERKEY | MDB_DUPFIXED | MDB_INTEGERDUP | MDB_REVERSEDUP;
constexpr uint16_t kDuplicateFlags = MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP | MDB_REVERSEDUP;

template <typename T>
T Load(const char* at) {
  T value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

// Fills `meta` from meta page `pgno`; false, with the reason, if it is not one.
bool ParseMeta(const char* page, uint64_t pgno, LmdbMeta* meta, std::string* why) {
  const uint32_t page_size = Load<uint32_t>(page + kFreeDbAt);
  if (!(Load<uint16_t>(page + kPageFlagsAt) & kMeta) || Load<uint64_t>(page) != pgno) {
    *why = "its header does not mark it as meta page " + std::to_string(pgno);
  } else if (Load<uint32_t>(page + kMagicAt) != kMagic) {
    *why = "wrong magic number (is it an LMDB database?)";
  } else if (Load<uint32_t>(page + kVersionAt) != kVersion) {
    *why = "format version " + std::to_string(Load<uint32_t>(page + kVersionAt)) + ", expected " +
           std::to_string(kVersion);
  } else if (page_size < kMinPageSize || page_size > kMaxPageSize ||
             (page_size & (page_size - 1)) != 0) {
    *why = "page size " + std::to_string(page_size) + " is not a power of two in 512..65536";
  } else {
    const char* main_db = page + kMainDbAt;
    meta->txnid = Load<uint64_t>(page + kTxnidAt);
    meta->page_size = page_size;
    meta->last_page = Load<uint64_t>(page + kLastPageAt);
    meta->flags = Load<uint16_t>(main_db + kDbFlagsAt);
    meta->depth = Load<uint16_t>(main_db + kDbDepthAt);
    meta->root = Load<uint64_t>(main_db + kDbRootAt);
    meta->branch_pages = Load<uint64_t>(main_db + kDbBranchPagesAt);
    meta->leaf_pages = Load<uint64_t>(main_db + kDbLeafPagesAt);
    meta->overflow_pages = Load<uint64_t>(main_db + kDbOverflowPagesAt);
    meta->entries = Load<uint64_t>(main_db + kDbEntriesAt);
    return true;
  }
  return false;
}

}  // namespace

// ---- LmdbFile ---------------------------------------------------------------------

LmdbFile::LmdbFile(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  CREMA_REQUIRE(fd_ >= 0, path << ": cannot open the LMDB data file: " << std::strerror(errno));
  try {
    struct stat info;
    CREMA_REQUIRE(fstat(fd_, &info) == 0 && S_ISREG(info.st_mode),
                  path << ": not a regular file, so not an LMDB data file");
    meta_ = ReadNewestMeta(info.st_size);
    CheckMainDatabase(info.st_size);
  } catch (...) {
    close(fd_);  // the destructor does not run for a constructor that throws
    throw;
  }
}

LmdbFile::~LmdbFile() { close(fd_); }

void LmdbFile::Read(uint64_t offset, size_t size, char* out, uint64_t pgno) const {
  while (size > 0) {
    const ssize_t got = pread(fd_, out, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    CREMA_REQUIRE(got >= 0,
                  path_ << ": page " << pgno << ": read failed: " << std::strerror(errno));
    CREMA_REQUIRE(got > 0, path_ << ": page " << pgno
                                 << ": the file ends inside it (was it cut short while open?)");
    out += got;
    offset += got;
    size -= got;
  }
}

// Of the two meta pages, the valid one with the higher transaction id: the
// other is the previous commit's, or one a failed commit left half written.
// Page 0 must be valid, as liblmdb requires: its page size places page 1.
LmdbMeta LmdbFile::ReadNewestMeta(uint64_t file_size) const {
  CREMA_REQUIRE(file_size >= kMetaEnd,
                path_ << ": " << file_size << " bytes, too short for an LMDB meta page");
  char page[kMetaEnd];
  std::string why;
  LmdbMeta first, second;
  Read(0, kMetaEnd, page, 0);
  CREMA_REQUIRE(ParseMeta(page, 0, &first, &why), path_ << ": meta page 0: " << why);
  CREMA_REQUIRE(file_size >= 2 * uint64_t(first.page_size),
                path_ << ": " << file_size << " bytes, shorter than its two meta pages of "
                      << first.page_size << " bytes (truncated)");
  Read(first.page_size, kMetaEnd, page, 1);
  if (ParseMeta(page, 1, &second, &why) && second.page_size == first.page_size &&
      second.txnid > first.txnid) {
    return second;
  }
  return first;
}

// What the cursor relies on from the meta page: a file that holds every page
// the meta counts, a tree shape it can bound its walk with, no duplicates.
void LmdbFile::CheckMainDatabase(uint64_t file_size) const {
  const LmdbMeta& meta = meta_;
  CREMA_REQUIRE(meta.last_page >= 1 && meta.last_page < file_size / meta.page_size,
                path_ << ": " << file_size << " bytes, but its meta page (transaction "
                      << meta.txnid << ") says it holds pages 0.." << meta.last_page << " of "
                      << meta.page_size << " bytes (truncated?)");
  CREMA_REQUIRE((meta.flags & kDuplicateFlags) == 0,
                path_ << ": a database with duplicate keys (MDB_DUPSORT) is not supported");
  CREMA_REQUIRE((meta.flags & ~kKnownDbFlags) == 0,
                path_ << ": unknown main database flags 0x" << std::hex << meta.flags);
  if (meta.root == kNoPage) {
    CREMA_REQUIRE(meta.depth == 0 && meta.entries == 0,
                  path_ << ": its meta page gives no root page but a tree of depth " << meta.depth
                        << " with " << meta.entries << " records");
    return;
  }
  CREMA_REQUIRE(meta.depth >= 1 && meta.depth <= kMaxDepth,
                path_ << ": tree depth " << meta.depth << " is not in 1.." << kMaxDepth);
  CREMA_REQUIRE(
      meta.root >= kFirstDataPage && meta.root <= meta.last_page,
      path_ << ": root page " << meta.root << " is not a data page (2.." << meta.last_page << ")");
  const uint64_t data_pages = meta.last_page - 1;
  CREMA_REQUIRE(meta.branch_pages <= data_pages && meta.leaf_pages <= data_pages &&
                    meta.overflow_pages <= data_pages &&
                    meta.branch_pages + meta.leaf_pages + meta.overflow_pages <= data_pages &&
                    meta.leaf_pages >= 1 && meta.branch_pages >= meta.depth - 1u &&
                    meta.entries >= meta.leaf_pages,
                path_ << ": its meta page's counts (" << meta.branch_pages << " branch, "
                      << meta.leaf_pages << " leaf, " << meta.overflow_pages << " overflow pages, "
                      << meta.entries << " records, depth " << meta.depth << ") do not fit its "
                      << data_pages << " data pages");
}

// ---- LmdbFileCursor ---------------------------------------------------------------

LmdbFileCursor::LmdbFileCursor(std::shared_ptr<const LmdbFile> file) : file_(std::move(file)) {
  const LmdbMeta& meta = file_->meta();
  path_.resize(meta.depth);
  for (Level& level : path_) level.page.resize(meta.page_size);
  // Other key orders are walked as stored, without the order check.
  check_key_order_ = (meta.flags & (MDB_REVERSEKEY | MDB_INTEGERKEY)) == 0;
  SeekToFirst();
}

void LmdbFileCursor::ResetWalkBounds() {
  valid_ = false;
  branch_pages_read_ = leaf_pages_read_ = overflow_pages_read_ = records_read_ = 0;
}

void LmdbFileCursor::SeekToFirst() {
  ResetWalkBounds();
  whole_walk_ = true;
  if (path_.empty()) return;  // an empty database (its meta page says so)
  LoadPage(0, file_->meta().root);
  DescendLeftmost(0);
  LoadRecord();
}

void LmdbFileCursor::Next() {
  if (!valid_) return;
  valid_ = false;  // until the next record has been checked
  size_t level = path_.size() - 1;
  while (path_[level].index + 1 >= path_[level].count) {  // climb out of finished pages
    if (level == 0) {
      if (whole_walk_) CheckRecordCount();
      return;
    }
    --level;
  }
  ++path_[level].index;
  DescendLeftmost(level);
  LoadRecord();
}

void LmdbFileCursor::Seek(const std::string& key) {
  CREMA_REQUIRE(check_key_order_, file_->path() << ": its keys are not in byte order "
                                                   "(MDB_REVERSEKEY or MDB_INTEGERKEY), so a "
                                                   "record cannot be found by its key");
  ResetWalkBounds();
  whole_walk_ = false;  // a walk from here sees part of the records
  CREMA_REQUIRE(!path_.empty(),
                file_->path() << ": no record has the key '" << key << "' (the database is empty)");
  LoadPage(0, file_->meta().root);
  for (size_t level = 0; level + 1 < path_.size(); ++level) {
    path_[level].index = LastNodeNotAfter(path_[level], key);
    LoadPage(level + 1, ChildPage(path_[level]));
  }
  Level& leaf = path_.back();
  leaf.index = LastNodeNotAfter(leaf, key);
  CREMA_REQUIRE(NodeKey(leaf, leaf.index) == key, file_->path()
                                                      << ": no record has the key '" << key << "'");
  LoadRecord();
}

std::string_view LmdbFileCursor::NodeKey(const Level& level, unsigned index) const {
  const size_t offset = NodeAt(level, index);
  const char* node = level.page.data() + offset;
  const uint16_t key_size = Load<uint16_t>(node + kNodeKeySizeAt);
  CREMA_REQUIRE(offset + kNodeHeaderSize + key_size <= level.page.size(),
                AtPage(level.pgno) << "the key of node " << index << " (" << key_size
                                   << " bytes at offset " << offset << ") runs past the page");
  return std::string_view(node + kNodeHeaderSize, key_size);
}

unsigned LmdbFileCursor::LastNodeNotAfter(const Level& level, std::string_view key) const {
  // Invariant: node `low` is the answer's lower bound (node 0 when none of
  // nodes 1.. comes before the key); keys ascend across the page.
  unsigned low = 0, high = level.count;  // the answer lies in [low, high)
  while (high - low > 1) {
    const unsigned middle = low + (high - low) / 2;
    if (NodeKey(level, middle) <= key) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

std::string LmdbFileCursor::AtPage(uint64_t pgno) const {
  return file_->path() + ": page " + std::to_string(pgno) + ": ";
}

// Loads the leftmost path below the current node of page `from_level`.
void LmdbFileCursor::DescendLeftmost(size_t from_level) {
  for (size_t level = from_level; level + 1 < path_.size(); ++level) {
    LoadPage(level + 1, ChildPage(path_[level]));
  }
}

// Reads page `pgno` as the path's page at `level` (a leaf at the meta page's
// depth, a branch above it) and checks its header.
void LmdbFileCursor::LoadPage(size_t level, uint64_t pgno) {
  const LmdbMeta& meta = file_->meta();
  const bool leaf = level + 1 == path_.size();
  uint64_t& pages_read = leaf ? leaf_pages_read_ : branch_pages_read_;
  CREMA_REQUIRE(++pages_read <= (leaf ? meta.leaf_pages : meta.branch_pages),
                AtPage(pgno) << "more " << (leaf ? "leaf" : "branch")
                             << " pages than the meta page's "
                             << (leaf ? meta.leaf_pages : meta.branch_pages)
                             << " (are pages shared, or in a cycle?)");
  Level& at = path_[level];
  at.pgno = pgno;
  at.index = at.count = 0;
  file_->Read(pgno * meta.page_size, meta.page_size, at.page.data(), pgno);
  const char* page = at.page.data();
  const uint16_t kind = Load<uint16_t>(page + kPageFlagsAt) & kPageKinds;
  const uint16_t lower = Load<uint16_t>(page + kLowerAt), upper = Load<uint16_t>(page + kUpperAt);
  CREMA_REQUIRE(Load<uint64_t>(page + kPageNumberAt) == pgno,
                AtPage(pgno) << "its header names page " << Load<uint64_t>(page + kPageNumberAt));
  CREMA_REQUIRE(kind == (leaf ? kLeaf : kBranch),
                AtPage(pgno) << "expected a " << (leaf ? "leaf" : "branch") << " page at depth "
                             << level + 1 << " of " << meta.depth << ", found flags 0x" << std::hex
                             << kind);
  // At least one node offset after the header; the nodes after the offsets.
  CREMA_REQUIRE(lower >= kPageHeaderSize + 2 && (lower - kPageHeaderSize) % 2 == 0 &&
                    lower <= upper && upper <= meta.page_size,
                AtPage(pgno) << "free space " << lower << ".." << upper
                             << " does not fit a page of " << meta.page_size
                             << " bytes with one node or more");
  at.count = (lower - kPageHeaderSize) / 2;
}

// The offset of node `index`, whose header lies in the node area of the page.
size_t LmdbFileCursor::NodeAt(const Level& level, unsigned index) const {
  const char* page = level.page.data();
  const size_t offset = Load<uint16_t>(page + kPageHeaderSize + 2 * index);
  const uint16_t upper = Load<uint16_t>(page + kUpperAt);
  CREMA_REQUIRE(offset >= upper && offset + kNodeHeaderSize <= level.page.size(),
                AtPage(level.pgno)
                    << "node " << index << " at offset " << offset << " lies outside the node area "
                    << upper << ".." << level.page.size());
  return offset;
}

// The page that the current node of a branch page points to.
uint64_t LmdbFileCursor::ChildPage(const Level& level) const {
  const size_t offset = NodeAt(level, level.index);
  const char* node = level.page.data() + offset;
  const uint16_t key_size = Load<uint16_t>(node + kNodeKeySizeAt);
  CREMA_REQUIRE(offset + kNodeHeaderSize + key_size <= level.page.size(),
                AtPage(level.pgno) << "the key of node " << level.index << " (" << key_size
                                   << " bytes at offset " << offset << ") runs past the page");
  const uint64_t child = Load<uint16_t>(node + kNodeLoAt) |
                         uint64_t(Load<uint16_t>(node + kNodeHiAt)) << 16 |
                         uint64_t(Load<uint16_t>(node + kNodeFlagsAt)) << 32;
  const uint64_t last_page = file_->meta().last_page;
  CREMA_REQUIRE(child >= kFirstDataPage && child <= last_page,
                AtPage(level.pgno) << "node " << level.index << " points to page " << child
                                   << ", not a data page (2.." << last_page << ")");
  return child;
}

// Points key and value at the current node of the leaf and checks the record.
void LmdbFileCursor::LoadRecord() {
  const Level& leaf = path_.back();
  const size_t offset = NodeAt(leaf, leaf.index);
  const char* node = leaf.page.data() + offset;
  const uint16_t flags = Load<uint16_t>(node + kNodeFlagsAt);
  const uint16_t key_size = Load<uint16_t>(node + kNodeKeySizeAt);
  const uint64_t data_size =
      Load<uint16_t>(node + kNodeLoAt) | uint64_t(Load<uint16_t>(node + kNodeHiAt)) << 16;
  CREMA_REQUIRE(!(flags & (kSubData | kDupData)),
                AtPage(leaf.pgno) << "node " << leaf.index
                                  << " holds a named sub-database or duplicate keys, which are "
                                     "not supported");
  CREMA_REQUIRE(!(flags & ~kBigData), AtPage(leaf.pgno)
                                          << "node " << leaf.index << " has unknown flags 0x"
                                          << std::hex << flags);
  const bool big = flags & kBigData;
  const uint64_t stored_size = big ? sizeof(uint64_t) : data_size;
  CREMA_REQUIRE(offset + kNodeHeaderSize + key_size + stored_size <= leaf.page.size(),
                AtPage(leaf.pgno) << "node " << leaf.index << " (key " << key_size << " bytes, "
                                  << "data " << stored_size << " bytes at offset " << offset
                                  << ") runs past the page");
  key_data_ = node + kNodeHeaderSize;
  key_size_ = key_size;
  value_data_ = key_data_ + key_size;
  value_size_ = data_size;
  overflow_loaded_ = false;
  if (big) {
    overflow_pgno_ = Load<uint64_t>(value_data_);
    value_data_ = nullptr;
  }
  CheckKeyOrder();
  CREMA_REQUIRE(++records_read_ <= file_->meta().entries,
                AtPage(leaf.pgno) << "more records than the meta page's " << file_->meta().entries
                                  << " (are pages shared?)");
  valid_ = true;
}

std::string LmdbFileCursor::value() const {
  if (value_data_) return std::string(value_data_, value_size_);
  if (!overflow_loaded_) {
    ReadOverflowValue(overflow_pgno_, value_size_);
    overflow_loaded_ = true;
  }
  return overflow_value_;
}

// Reads a value stored in the overflow run that starts at page `pgno`.
void LmdbFileCursor::ReadOverflowValue(uint64_t pgno, uint64_t size) const {
  const LmdbMeta& meta = file_->meta();
  const Level& leaf = path_.back();
  CREMA_REQUIRE(pgno >= kFirstDataPage && pgno <= meta.last_page,
                AtPage(leaf.pgno) << "node " << leaf.index << " has its value on page " << pgno
                                  << ", not a data page (2.." << meta.last_page << ")");
  char header[kPageHeaderSize];
  file_->Read(pgno * meta.page_size, kPageHeaderSize, header, pgno);
  const uint16_t kind = Load<uint16_t>(header + kPageFlagsAt) & kPageKinds;
  const uint32_t run = Load<uint32_t>(header + kOverflowCountAt);
  CREMA_REQUIRE(Load<uint64_t>(header + kPageNumberAt) == pgno && kind == kOverflow,
                AtPage(pgno) << "expected an overflow page (flags 0x4), found page "
                             << Load<uint64_t>(header + kPageNumberAt) << " with flags 0x"
                             << std::hex << kind);
  CREMA_REQUIRE(run >= 1 && run <= meta.last_page + 1 - pgno &&
                    kPageHeaderSize + size <= uint64_t(run) * meta.page_size,
                AtPage(pgno) << "an overflow run of " << run << " pages for a value of " << size
                             << " bytes does not fit the value or the file's pages 0.."
                             << meta.last_page);
  overflow_pages_read_ += run;
  CREMA_REQUIRE(overflow_pages_read_ <= meta.overflow_pages,
                AtPage(pgno) << "more overflow pages than the meta page's " << meta.overflow_pages
                             << " (are pages shared?)");
  overflow_value_.resize(size);
  file_->Read(pgno * meta.page_size + kPageHeaderSize, size, overflow_value_.data(), pgno);
}

// Keys come strictly in order in a sound tree: a page reached twice (a cycle,
// a shared subtree) or a corrupt key shows here.
void LmdbFileCursor::CheckKeyOrder() {
  if (!check_key_order_) return;
  const std::string_view key(key_data_, key_size_);
  CREMA_REQUIRE(records_read_ == 0 || key > std::string_view(previous_key_),
                AtPage(path_.back().pgno)
                    << "key of node " << path_.back().index << " does not follow the previous key");
  previous_key_.assign(key_data_, key_size_);
}

void LmdbFileCursor::CheckRecordCount() const {
  CREMA_REQUIRE(records_read_ == file_->meta().entries,
                file_->path() << ": the tree holds " << records_read_
                              << " records, but its meta page says " << file_->meta().entries);
}

}  // namespace db
}  // namespace crema
