// Reads an LMDB data file (data.mdb) without liblmdb's memory map: pages come
// in with pread and every field is checked before it is used, so a truncated
// or corrupt file is an Error naming the file and the page, never a SIGBUS, a
// wild read or an endless walk. Only the current root-to-leaf path of pages
// is held in memory. Writing stays with liblmdb (db.cpp).
#ifndef CREMA_STORAGE_LMDB_READER_HPP_
#define CREMA_STORAGE_LMDB_READER_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "crema/util/db.hpp"

namespace crema {
namespace db {

// The main database's tree as the newest valid meta page describes it.
struct LmdbMeta {
  uint64_t txnid = 0;
  uint32_t page_size = 0;
  uint64_t last_page = 0;  // the highest page number in use
  uint16_t flags = 0;      // the main database's MDB_* flags
  uint16_t depth = 0;      // 0 for an empty database
  uint64_t root = 0;
  uint64_t branch_pages = 0, leaf_pages = 0, overflow_pages = 0;
  uint64_t entries = 0;
};

// An open data.mdb whose meta pages have been checked, and which holds every
// page they name. Shared by the cursors (pread keeps no file position).
class LmdbFile {
 public:
  // Error naming `path` if it cannot be read, is not LMDB, uses features this
  // reader does not support, or is shorter than its meta page says.
  explicit LmdbFile(const std::string& path);
  ~LmdbFile();
  LmdbFile(const LmdbFile&) = delete;
  LmdbFile& operator=(const LmdbFile&) = delete;

  const std::string& path() const { return path_; }
  const LmdbMeta& meta() const { return meta_; }
  // Reads `size` bytes at `offset` for page `pgno` (named in the error if the
  // file has since been cut short).
  void Read(uint64_t offset, size_t size, char* out, uint64_t pgno) const;

 private:
  LmdbMeta ReadNewestMeta(uint64_t file_size) const;
  void CheckMainDatabase(uint64_t file_size) const;

  std::string path_;
  int fd_ = -1;
  LmdbMeta meta_;
};

// Walks the main database in key order. Bounded work on any input: pages are
// checked against the depth the meta page gives, and the pages, overflow
// pages and records read per pass against the meta page's counts, so a cycle
// or a shared subtree is an Error rather than a loop.
class LmdbFileCursor : public Cursor {
 public:
  explicit LmdbFileCursor(std::shared_ptr<const LmdbFile> file);
  void SeekToFirst() override;
  void Next() override;
  // Descends from the root to the key (byte order: a database of
  // MDB_REVERSEKEY or MDB_INTEGERKEY order is an Error); the walk's bounds
  // start again from it, as after SeekToFirst.
  void Seek(const std::string& key) override;
  std::string key() const override { return std::string(key_data_, key_size_); }
  // A value on overflow pages is read here, when asked for, so that walking
  // the keys alone reads the leaves only.
  std::string value() const override;
  bool valid() const override { return valid_; }

 private:
  // One page of the path from the root, and which of its nodes is current.
  struct Level {
    uint64_t pgno = 0;
    std::vector<char> page;
    unsigned index = 0;
    unsigned count = 0;
  };

  void LoadPage(size_t level, uint64_t pgno);
  void DescendLeftmost(size_t from_level);
  size_t NodeAt(const Level& level, unsigned index) const;
  uint64_t ChildPage(const Level& level) const;
  void LoadRecord();
  void ReadOverflowValue(uint64_t pgno, uint64_t size) const;
  // The key of node `index` of a page of the path.
  std::string_view NodeKey(const Level& level, unsigned index) const;
  // The last node of the page whose key is `key` or before it; a branch
  // page's node 0 stands for every key before node 1's.
  unsigned LastNodeNotAfter(const Level& level, std::string_view key) const;
  void ResetWalkBounds();
  void CheckKeyOrder();
  void CheckRecordCount() const;
  // "<path>: page <pgno>: ", the start of an error message.
  std::string AtPage(uint64_t pgno) const;

  std::shared_ptr<const LmdbFile> file_;
  std::vector<Level> path_;  // path_[0] is the root, path_.back() the leaf
  bool valid_ = false;
  const char* key_data_ = nullptr;
  size_t key_size_ = 0;
  const char* value_data_ = nullptr;
  size_t value_size_ = 0;
  // The current value when it is not in the leaf: its first overflow page,
  // and the value once value() has read it.
  uint64_t overflow_pgno_ = 0;
  mutable bool overflow_loaded_ = false;
  mutable std::string overflow_value_;
  bool check_key_order_ = true;
  std::string previous_key_;
  // Read in this pass, checked against the meta page's counts.
  uint64_t branch_pages_read_ = 0, leaf_pages_read_ = 0;
  mutable uint64_t overflow_pages_read_ = 0;
  uint64_t records_read_ = 0;
  // Whether this walk began at the first record (SeekToFirst), so that its
  // end must have seen every record the meta page counts.
  bool whole_walk_ = true;
};

}  // namespace db
}  // namespace crema

#endif  // CREMA_STORAGE_LMDB_READER_HPP_
