#include "crema/util/db.hpp"

#include <leveldb/db.h>
#include <leveldb/write_batch.h>
#include <lmdb.h>
#include <sys/stat.h>

#include <utility>
#include <vector>

#include "crema/storage/lmdb_reader.hpp"

namespace crema {
namespace db {

namespace {

// ---- LMDB -------------------------------------------------------------------------

void LmdbRequire(int status, const std::string& source, const char* what) {
  CREMA_REQUIRE(status == MDB_SUCCESS,
                source << ": LMDB " << what << " failed: " << mdb_strerror(status));
}

class LmdbCursor : public Cursor {
 public:
  LmdbCursor(MDB_txn* txn, MDB_cursor* cursor) : txn_(txn), cursor_(cursor) { SeekToFirst(); }
  ~LmdbCursor() override {
    mdb_cursor_close(cursor_);
    mdb_txn_abort(txn_);
  }
  void SeekToFirst() override { Move(MDB_FIRST); }
  void Next() override { Move(MDB_NEXT); }
  void Seek(const std::string& key) override {
    // A key LMDB cannot hold (empty, or past its key size) names no record.
    const size_t longest = static_cast<size_t>(mdb_env_get_maxkeysize(mdb_txn_env(txn_)));
    valid_ = false;
    if (!key.empty() && key.size() <= longest) {
      key_ = MDB_val{key.size(), const_cast<char*>(key.data())};
      Move(MDB_SET_KEY);
    }
    CREMA_REQUIRE(valid_, "LMDB: no record has the key '" << key << "'");
  }
  std::string key() const override {
    return std::string(static_cast<const char*>(key_.mv_data), key_.mv_size);
  }
  std::string value() const override {
    return std::string(static_cast<const char*>(value_.mv_data), value_.mv_size);
  }
  bool valid() const override { return valid_; }

 private:
  void Move(MDB_cursor_op op) {
    const int status = mdb_cursor_get(cursor_, &key_, &value_, op);
    if (status == MDB_NOTFOUND) {
      valid_ = false;
    } else {
      CREMA_REQUIRE(status == MDB_SUCCESS, "LMDB read failed: " << mdb_strerror(status));
      valid_ = true;
    }
  }
  MDB_txn* txn_;
  MDB_cursor* cursor_;
  MDB_val key_{}, value_{};
  bool valid_ = false;
};

class LmdbDB;

class LmdbTransaction : public Transaction {
 public:
  explicit LmdbTransaction(LmdbDB* db) : db_(db) {}
  void Put(const std::string& key, const std::string& value) override {
    keys_.push_back(key);
    values_.push_back(value);
  }
  void Commit() override;

 private:
  LmdbDB* db_;
  std::vector<std::string> keys_, values_;
};

// Reads go through LmdbFile, which checks every page against the meta pages
// before using it (liblmdb's map would turn a truncated or corrupt file into
// a SIGBUS or a wild read); writes and their cursors go through liblmdb.
class LmdbDB : public DB {
 public:
  ~LmdbDB() override { Close(); }
  void Open(const std::string& source, Mode mode) override {
    source_ = source;
    if (mode == READ) {
      struct stat info;
      CREMA_REQUIRE(stat(source.c_str(), &info) == 0,
                    source << ": no such LMDB database (the folder does not exist)");
      file_ = std::make_shared<const LmdbFile>(DataFile(source));
      return;
    }
    if (mode == NEW) {
      struct stat info;
      CREMA_REQUIRE(stat(source.c_str(), &info) != 0,
                    source << ": already exists; refusing to overwrite a database");
      CREMA_REQUIRE(mkdir(source.c_str(), 0744) == 0, source << ": cannot create the folder");
    } else {
      CheckExistingFile(source);
    }
    OpenForWriting(source);
  }
  void Close() override {
    file_.reset();
    if (env_) {
      mdb_dbi_close(env_, dbi_);
      mdb_env_close(env_);
      env_ = nullptr;
    }
  }
  std::unique_ptr<Cursor> NewCursor() override {
    if (file_) return std::unique_ptr<Cursor>(new LmdbFileCursor(file_));
    MDB_txn* txn;
    MDB_cursor* cursor;
    LmdbRequire(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), source_, "transaction");
    const int status = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (status != MDB_SUCCESS) mdb_txn_abort(txn);
    LmdbRequire(status, source_, "database open");
    LmdbRequire(mdb_cursor_open(txn, dbi_, &cursor), source_, "cursor");
    return std::unique_ptr<Cursor>(new LmdbCursor(txn, cursor));
  }
  std::unique_ptr<Transaction> NewTransaction() override {
    return std::unique_ptr<Transaction>(new LmdbTransaction(this));
  }

  // Writes the batch, doubling the map size and retrying when it is full.
  void WriteBatch(const std::vector<std::string>& keys, const std::vector<std::string>& values) {
    for (;;) {
      MDB_txn* txn;
      LmdbRequire(mdb_txn_begin(env_, nullptr, 0, &txn), source_, "write transaction");
      LmdbRequire(mdb_dbi_open(txn, nullptr, 0, &dbi_), source_, "database open");
      int status = MDB_SUCCESS;
      for (size_t i = 0; i < keys.size() && status == MDB_SUCCESS; ++i) {
        MDB_val key{keys[i].size(), const_cast<char*>(keys[i].data())};
        MDB_val value{values[i].size(), const_cast<char*>(values[i].data())};
        status = mdb_put(txn, dbi_, &key, &value, 0);
      }
      if (status == MDB_SUCCESS) {
        status = mdb_txn_commit(txn);
      } else {
        mdb_txn_abort(txn);
      }
      if (status != MDB_MAP_FULL) {
        LmdbRequire(status, source_, "write");
        return;
      }
      MDB_envinfo info;
      mdb_env_info(env_, &info);
      LmdbRequire(mdb_env_set_mapsize(env_, info.me_mapsize * 2), source_, "map resize");
    }
  }

 private:
  static std::string DataFile(const std::string& source) { return source + "/data.mdb"; }

  // liblmdb maps the file and would fault on a page past its end: an existing
  // file must hold what its meta pages say before it is written to.
  static void CheckExistingFile(const std::string& source) {
    struct stat info;
    if (stat(DataFile(source).c_str(), &info) != 0 || info.st_size == 0) return;  // a new file
    const LmdbFile checked(DataFile(source));
  }

  void OpenForWriting(const std::string& source) {
    LmdbRequire(mdb_env_create(&env_), source, "environment creation");
    // Room for a large data set up front (the file grows sparsely); a full
    // map is still grown on demand by WriteBatch.
    int status = mdb_env_set_mapsize(env_, size_t(1) << 30);
    if (status == MDB_SUCCESS) status = mdb_env_open(env_, source.c_str(), 0, 0664);
    if (status != MDB_SUCCESS) {
      mdb_env_close(env_);
      env_ = nullptr;
      LmdbRequire(status, source, "open (is it an LMDB database?)");
    }
  }

  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  std::shared_ptr<const LmdbFile> file_;  // READ mode
  std::string source_;
};

void LmdbTransaction::Commit() {
  db_->WriteBatch(keys_, values_);
  keys_.clear();
  values_.clear();
}

// ---- LevelDB ------------------------------------------------------------------------

class LevelDBCursor : public Cursor {
 public:
  LevelDBCursor(leveldb::Iterator* iter, const std::string& source) : iter_(iter), source_(source) {
    SeekToFirst();
  }
  void SeekToFirst() override {
    iter_->SeekToFirst();
    CheckStatus();
  }
  void Next() override {
    iter_->Next();
    CheckStatus();
  }
  void Seek(const std::string& key) override {
    iter_->Seek(key);
    CheckStatus();
    CREMA_REQUIRE(iter_->Valid() && iter_->key() == leveldb::Slice(key),
                  source_ << ": no record has the key '" << key << "'");
  }
  std::string key() const override { return iter_->key().ToString(); }
  std::string value() const override { return iter_->value().ToString(); }
  bool valid() const override { return iter_->Valid(); }

 private:
  // A corrupt or missing table ends the iteration early, with the reason in
  // the iterator's status: that is an error, not the end of the data.
  void CheckStatus() const {
    if (iter_->Valid()) return;
    const leveldb::Status status = iter_->status();
    CREMA_REQUIRE(status.ok(), source_ << ": LevelDB read failed: " << status.ToString());
  }

  std::unique_ptr<leveldb::Iterator> iter_;
  std::string source_;
};

class LevelDBTransaction : public Transaction {
 public:
  explicit LevelDBTransaction(leveldb::DB* db, const std::string& source)
      : db_(db), source_(source) {}
  void Put(const std::string& key, const std::string& value) override { batch_.Put(key, value); }
  void Commit() override {
    const leveldb::Status status = db_->Write(leveldb::WriteOptions(), &batch_);
    CREMA_REQUIRE(status.ok(), source_ << ": LevelDB write failed: " << status.ToString());
    batch_.Clear();
  }

 private:
  leveldb::DB* db_;
  std::string source_;
  leveldb::WriteBatch batch_;
};

class LevelDB : public DB {
 public:
  void Open(const std::string& source, Mode mode) override {
    source_ = source;
    leveldb::Options options;
    options.block_size = 65536;
    options.write_buffer_size = 268435456;
    options.max_open_files = 100;
    options.error_if_exists = mode == NEW;
    options.create_if_missing = mode != READ;
    leveldb::DB* db = nullptr;
    const leveldb::Status status = leveldb::DB::Open(options, source, &db);
    CREMA_REQUIRE(status.ok(), source << ": cannot open LevelDB database: " << status.ToString());
    db_.reset(db);
  }
  void Close() override { db_.reset(); }
  std::unique_ptr<Cursor> NewCursor() override {
    leveldb::ReadOptions options;
    options.verify_checksums = true;  // a garbled block is an error, not odd records
    return std::unique_ptr<Cursor>(new LevelDBCursor(db_->NewIterator(options), source_));
  }
  std::unique_ptr<Transaction> NewTransaction() override {
    return std::unique_ptr<Transaction>(new LevelDBTransaction(db_.get(), source_));
  }

 private:
  std::unique_ptr<leveldb::DB> db_;
  std::string source_;
};

}  // namespace

std::unique_ptr<DB> GetDB(DataParameter::DB backend) {
  switch (backend) {
    case DataParameter::LMDB:
      return std::unique_ptr<DB>(new LmdbDB());
    case DataParameter::LEVELDB:
      return std::unique_ptr<DB>(new LevelDB());
  }
  CREMA_FAIL("unknown database backend " << static_cast<int>(backend));
}

std::unique_ptr<DB> GetDB(const std::string& backend) {
  if (backend == "lmdb") return GetDB(DataParameter::LMDB);
  if (backend == "leveldb") return GetDB(DataParameter::LEVELDB);
  CREMA_FAIL("unknown database backend '" << backend << "' (expected lmdb or leveldb)");
}

}  // namespace db
}  // namespace crema
