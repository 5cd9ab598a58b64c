// HDF5Data reads rows in order across files and wraps; HDF5Output writes
// what it is given, appending batches.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "crema/data/hdf5_data_layer.hpp"
#include "crema/layers/hdf5_output_layer.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class HDF5DataLayerTest : public ScratchDirTest {
 protected:
  // Writes `rows` rows of data [rows, 2, 3] (or [rows, row_shape]) = first +
  // row index, and label.
  std::string WriteFile(const std::string& name, int rows, float first,
                        const std::vector<int>& row_shape = {2, 3}) {
    LayerParameter param;
    param.set_name("out");
    param.mutable_hdf5_output_param()->set_file_name(dir_ + "/" + name);
    HDF5OutputLayer<float> output(param);
    std::vector<int> data_shape{rows};
    data_shape.insert(data_shape.end(), row_shape.begin(), row_shape.end());
    Blob<float> data(data_shape), label(std::vector<int>{rows});
    const int row_size = data.count(1);
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < row_size; ++j) data.mutable_cpu_data()[r * row_size + j] = first + r;
      label.mutable_cpu_data()[r] = first + r;
    }
    std::vector<Blob<float>*> bottom{&data, &label}, top;
    output.SetUp(bottom, top);
    output.Forward(bottom, top);
    EXPECT_EQ(output.rows_written(), rows);
    return dir_ + "/" + name;
  }
  // An HDF5Data layer over the files named in list.txt, batches of 4.
  LayerParameter ListParam() const {
    LayerParameter param;
    param.set_name("hdf5");
    param.add_top("data");
    param.add_top("label");
    param.mutable_hdf5_data_param()->set_source(dir_ + "/list.txt");
    param.mutable_hdf5_data_param()->set_batch_size(4);
    return param;
  }
};

TEST_F(HDF5DataLayerTest, ReadsRowsInOrderAcrossFilesAndWraps) {
  const std::string a = WriteFile("a.h5", 3, 0), b = WriteFile("b.h5", 2, 10);
  std::ofstream(dir_ + "/list.txt") << a << "\n" << b << "\n";
  const LayerParameter param = ListParam();
  HDF5DataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  EXPECT_EQ(data.shape(), (std::vector<int>{4, 2, 3}));
  EXPECT_TRUE(layer.ShareInParallel());
  const float expected[] = {0, 1, 2, 10, 11, 0, 1, 2, 10, 11, 0, 1};
  for (int step = 0; step < 3; ++step) {
    layer.Forward(bottom, top);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(label.cpu_data()[i], expected[step * 4 + i]) << "step " << step;
      EXPECT_EQ(data.cpu_data()[i * 6 + 5], expected[step * 4 + i]);
    }
  }
}

TEST_F(HDF5DataLayerTest, ShuffleKeepsEveryRowOncePerPass) {
  const std::string a = WriteFile("a.h5", 6, 0);
  std::ofstream(dir_ + "/list.txt") << a << "\n";
  LayerParameter param;
  param.set_name("hdf5");
  param.add_top("data");
  param.add_top("label");
  param.mutable_hdf5_data_param()->set_source(dir_ + "/list.txt");
  param.mutable_hdf5_data_param()->set_batch_size(6);
  param.mutable_hdf5_data_param()->set_shuffle(true);
  HDF5DataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  std::vector<float> seen(label.cpu_data(), label.cpu_data() + 6);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST_F(HDF5DataLayerTest, MissingListOrDatasetIsAUserError) {
  LayerParameter param;
  param.set_name("hdf5");
  param.add_top("data");
  param.mutable_hdf5_data_param()->set_source(dir_ + "/none.txt");
  param.mutable_hdf5_data_param()->set_batch_size(1);
  HDF5DataLayer<float> layer(param);
  Blob<float> data;
  std::vector<Blob<float>*> bottom, top{&data};
  EXPECT_THROW(layer.SetUp(bottom, top), Error);
  const std::string a = WriteFile("a.h5", 2, 0);
  std::ofstream(dir_ + "/list.txt") << a << "\n";
  param.mutable_hdf5_data_param()->set_source(dir_ + "/list.txt");
  param.set_top(0, "features");  // no such dataset
  HDF5DataLayer<float> wrong(param);
  try {
    wrong.SetUp(bottom, top);
    FAIL() << "a missing dataset must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("features"), std::string::npos) << e.what();
  }
}

// Rows of another shape but the same size (3 x 2 after 2 x 3) were copied
// into the tops shaped by the first file, silently.
TEST_F(HDF5DataLayerTest, FileWithAnotherRowShapeIsNamed) {
  const std::string a = WriteFile("a.h5", 3, 0), b = WriteFile("b.h5", 2, 10, {3, 2});
  std::ofstream(dir_ + "/list.txt") << a << "\n" << b << "\n";
  const LayerParameter param = ListParam();
  HDF5DataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  try {
    layer.Forward(bottom, top);
    FAIL() << "rows of 3 x 2 after rows of 2 x 3 must be refused";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("layer 'hdf5' (HDF5Data): " + b + ": dataset 'data'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("3 2 (6)"), std::string::npos) << message;
    EXPECT_NE(message.find("2 3 (6)"), std::string::npos) << message;
  }
}

// Datasets of one file that disagree in their number of rows are refused,
// naming the file and both.
TEST_F(HDF5DataLayerTest, DatasetsWithDifferentRowCountsAreNamed) {
  const std::string a = WriteFile("a.h5", 3, 0);
  const std::string b = WriteFile("b.h5", 2, 0);
  LayerParameter param;
  param.set_name("hdf5");
  param.add_top("data");
  param.add_top("label");
  param.mutable_hdf5_data_param()->set_source(dir_ + "/list.txt");
  param.mutable_hdf5_data_param()->set_batch_size(1);
  // a.h5's data (3 rows) with b.h5's label (2 rows): one file holding both.
  const std::string mixed = dir_ + "/mixed.h5";
  const hid_t out = H5Fcreate(mixed.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t from_a = H5Fopen(a.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t from_b = H5Fopen(b.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(H5Ocopy(from_a, "data", out, "data", H5P_DEFAULT, H5P_DEFAULT), 0);
  ASSERT_GE(H5Ocopy(from_b, "label", out, "label", H5P_DEFAULT, H5P_DEFAULT), 0);
  H5Fclose(from_a);
  H5Fclose(from_b);
  H5Fclose(out);
  std::ofstream(dir_ + "/list.txt") << mixed << "\n";
  HDF5DataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  try {
    layer.SetUp(bottom, top);
    FAIL() << "3 rows of data with 2 labels must be refused";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(mixed + ": dataset 'label' has 2 rows, 'data' has 3"), std::string::npos)
        << message;
  }
}

TEST_F(HDF5DataLayerTest, OutputAppendsBatches) {
  LayerParameter param;
  param.set_name("out");
  param.mutable_hdf5_output_param()->set_file_name(dir_ + "/out.h5");
  {
    HDF5OutputLayer<float> output(param);
    Blob<float> data(std::vector<int>{2, 3}), label(std::vector<int>{2});
    std::vector<Blob<float>*> bottom{&data, &label}, top;
    output.SetUp(bottom, top);
    for (int step = 0; step < 3; ++step) {
      for (int i = 0; i < 6; ++i) data.mutable_cpu_data()[i] = step * 10 + i;
      label.mutable_cpu_data()[0] = step;
      label.mutable_cpu_data()[1] = step;
      output.Forward(bottom, top);
    }
    EXPECT_EQ(output.rows_written(), 6);
  }
  std::ofstream(dir_ + "/list.txt") << dir_ + "/out.h5\n";
  LayerParameter read;
  read.set_name("in");
  read.add_top("data");
  read.add_top("label");
  read.mutable_hdf5_data_param()->set_source(dir_ + "/list.txt");
  read.mutable_hdf5_data_param()->set_batch_size(6);
  HDF5DataLayer<float> input(read);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  input.SetUp(bottom, top);
  input.Forward(bottom, top);
  EXPECT_EQ(data.shape(), (std::vector<int>{6, 3}));
  EXPECT_EQ(data.cpu_data()[17], 25.f);  // last row of the third batch
  EXPECT_EQ(label.cpu_data()[5], 2.f);
}

}  // namespace
}  // namespace crema
