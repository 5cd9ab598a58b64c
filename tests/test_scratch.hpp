// What the tests that write files share: a scratch folder that is removed
// afterwards, and small LMDBs of Datum records.
#ifndef CREMA_TESTS_TEST_SCRATCH_HPP_
#define CREMA_TESTS_TEST_SCRATCH_HPP_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "crema/proto/crema.pb.h"
#include "crema/util/db.hpp"

namespace crema {

// A fixture owning dir_, a fresh folder under /tmp, removed after the test.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/crema_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

// Writes an LMDB at `path` of `count` single-channel height x width records
// keyed %08d in order; record i has pixels pixel(i, p) and label label(i).
inline void WriteDatumLMDB(const std::string& path, int count, int height, int width,
                           const std::function<int(int, int)>& pixel,
                           const std::function<int(int)>& label) {
  auto db = db::GetDB("lmdb");
  db->Open(path, db::NEW);
  auto txn = db->NewTransaction();
  for (int i = 0; i < count; ++i) {
    Datum datum;
    datum.set_channels(1);
    datum.set_height(height);
    datum.set_width(width);
    std::string pixels(height * width, '\0');
    for (int p = 0; p < height * width; ++p) pixels[p] = static_cast<char>(pixel(i, p));
    datum.set_data(pixels);
    datum.set_label(label(i));
    char key[16];
    std::snprintf(key, sizeof(key), "%08d", i);
    txn->Put(key, datum.SerializeAsString());
  }
  txn->Commit();
}

}  // namespace crema

#endif  // CREMA_TESTS_TEST_SCRATCH_HPP_
