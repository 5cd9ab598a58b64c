// What the data pipeline's tests share: a fixture with LMDBs of small records
// whose label is their index, and a Data layer's parameter over one.
#ifndef CREMA_TESTS_DATA_TEST_UTIL_HPP_
#define CREMA_TESTS_DATA_TEST_UTIL_HPP_

#include <string>

#include "crema/data_reader.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {

// A database of `count` 1x2x2 records whose label is their index.
class DataReaderTest : public ScratchDirTest {
 protected:
  void TearDown() override {
    Context::set_solver_count(1);
    Context::set_local_solver_count(1);
    Context::set_solver_rank(0);
    ScratchDirTest::TearDown();
  }
  std::string MakeDB(int count) {
    const std::string source = dir_ + "/db" + std::to_string(count);
    WriteDatumLMDB(
        source, count, 2, 2, [](int i, int) { return i % 256; }, [](int i) { return i; });
    return source;
  }
  LayerParameter DataParam(const std::string& source, int batch, const std::string& name = "data") {
    LayerParameter param;
    param.set_name(name);
    param.set_type("Data");
    param.set_phase(TRAIN);
    param.mutable_data_param()->set_source(source);
    param.mutable_data_param()->set_batch_size(batch);
    param.mutable_data_param()->set_backend(DataParameter::LMDB);
    return param;
  }
  static int TakeLabel(DataReader* reader) {
    DataRecord* record = reader->full().pop();
    const int label = record->datum.label();
    reader->free().push(record);
    return label;
  }
};

}  // namespace crema

#endif  // CREMA_TESTS_DATA_TEST_UTIL_HPP_
