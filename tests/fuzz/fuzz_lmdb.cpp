// (f) An LMDB file's bytes as data.mdb: open it for reading and iterate every
// record. Whatever the bytes, the database reads as records or fails with a
// crema::Error naming it — never a crash, a stray read, a leak or a hang.
#include <memory>
#include <string>

#include "crema/util/db.hpp"
#include "fuzz_common.hpp"

namespace crema {
namespace fuzz {
// Databases written by liblmdb: one record, many (branch pages), values
// larger than a page (overflow pages), none.
void WriteSeeds(const std::string& dir) {
  const int records[] = {1, 300, 3, 0};
  const size_t value_sizes[] = {10, 40, 9000, 0};
  for (int seed = 0; seed < 4; ++seed) {
    const std::string db_dir = WorkDir() + "/seed" + std::to_string(seed);
    auto db = db::GetDB("lmdb");
    db->Open(db_dir, db::NEW);
    auto transaction = db->NewTransaction();
    for (int i = 0; i < records[seed]; ++i) {
      transaction->Put("key" + std::to_string(100000 + i),
                       std::string(value_sizes[seed], static_cast<char>('a' + i % 26)));
    }
    transaction->Commit();
    db->Close();
    WriteFile(dir + "/seed" + std::to_string(seed) + ".mdb", ReadFile(db_dir + "/data.mdb"));
  }
}
}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = crema::fuzz::WorkDir() + "/input";
  crema::fuzz::Remove(dir);
  crema::fuzz::MakeDir(dir);
  crema::fuzz::WriteFile(dir + "/data.mdb", data, size);
  try {
    auto db = crema::db::GetDB("lmdb");
    db->Open(dir, crema::db::READ);
    size_t bytes = 0;  // touches every key and value
    for (auto cursor = db->NewCursor(); cursor->valid(); cursor->Next()) {
      bytes += cursor->key().size() + cursor->value().size();
    }
    if (bytes == size_t(-1)) return 1;  // keeps the reads
  } catch (const crema::Error&) {
  }
  return 0;
}
