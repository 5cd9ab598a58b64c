// Key-value databases that hold data sets (LMDB and LevelDB, as Caffe writes
// them): a cursor to walk records in key order, a transaction to write them.
// Opening a missing or corrupt database is a user error naming the path.
#ifndef CREMA_UTIL_DB_HPP_
#define CREMA_UTIL_DB_HPP_

#include <memory>
#include <string>

#include "crema/common.hpp"
#include "crema/proto/crema.pb.h"

namespace crema {
namespace db {

enum Mode { READ, WRITE, NEW };

class Cursor {
 public:
  virtual ~Cursor() = default;
  virtual void SeekToFirst() = 0;
  virtual void Next() = 0;
  // Moves to the record whose key is exactly `key` (Next goes on from it in
  // key order); an Error naming the key and the database when none is.
  virtual void Seek(const std::string& key) = 0;
  virtual std::string key() const = 0;
  virtual std::string value() const = 0;
  virtual bool valid() const = 0;
};

class Transaction {
 public:
  virtual ~Transaction() = default;
  virtual void Put(const std::string& key, const std::string& value) = 0;
  // Writes every Put since the last Commit.
  virtual void Commit() = 0;
};

class DB {
 public:
  virtual ~DB() = default;
  // READ opens an existing database (also in a read-only folder); NEW
  // creates one (refusing to overwrite); WRITE opens or creates.
  virtual void Open(const std::string& source, Mode mode) = 0;
  virtual void Close() = 0;
  virtual std::unique_ptr<Cursor> NewCursor() = 0;
  virtual std::unique_ptr<Transaction> NewTransaction() = 0;
};

std::unique_ptr<DB> GetDB(DataParameter::DB backend);
// "lmdb" or "leveldb"; anything else is a user error.
std::unique_ptr<DB> GetDB(const std::string& backend);

}  // namespace db
}  // namespace crema

#endif  // CREMA_UTIL_DB_HPP_
