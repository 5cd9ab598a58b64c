// MemoryData serves caller arrays in batches and wraps around; Datums added
// as a vector go through the transformer.
#include <gtest/gtest.h>

#include <vector>

#include "crema/layers/memory_data_layer.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

TEST(MemoryDataLayerTest, ServesCallerArraysInBatchesAndWraps) {
  LayerParameter param;
  param.set_name("memory");
  MemoryDataParameter* memory = param.mutable_memory_data_param();
  memory->set_batch_size(2);
  memory->set_channels(1);
  memory->set_height(1);
  memory->set_width(3);
  MemoryDataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  EXPECT_EQ(data.shape(), (std::vector<int>{2, 1, 1, 3}));
  std::vector<float> values(12), labels{0, 1, 2, 3};
  for (int i = 0; i < 12; ++i) values[i] = float(i);
  EXPECT_THROW(layer.Reset(values.data(), labels.data(), 3), Error);  // not a multiple of 2
  layer.Reset(values.data(), labels.data(), 4);
  for (int step = 0; step < 3; ++step) {
    layer.Forward(bottom, top);
    const int first = (step % 2) * 2;
    EXPECT_EQ(label.cpu_data()[0], float(first));
    EXPECT_EQ(data.cpu_data()[5], float(first * 3 + 5));
  }
  EXPECT_TRUE(layer.ShareInParallel());
}

TEST(MemoryDataLayerTest, AddDatumVectorTransforms) {
  LayerParameter param;
  param.set_name("memory");
  param.mutable_transform_param()->set_scale(0.5);
  MemoryDataParameter* memory = param.mutable_memory_data_param();
  memory->set_batch_size(1);
  memory->set_channels(1);
  memory->set_height(1);
  memory->set_width(2);
  MemoryDataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  std::vector<Datum> datums(2);
  for (int i = 0; i < 2; ++i) {
    datums[i].set_channels(1);
    datums[i].set_height(1);
    datums[i].set_width(2);
    datums[i].set_data(std::string{char(2 * i), char(4)});
    datums[i].set_label(i + 5);
  }
  layer.AddDatumVector(datums);
  layer.Forward(bottom, top);
  layer.Forward(bottom, top);
  EXPECT_EQ(data.cpu_data()[0], 1.f);  // 2 * 0.5
  EXPECT_EQ(data.cpu_data()[1], 2.f);
  EXPECT_EQ(label.cpu_data()[0], 6.f);
}

}  // namespace
}  // namespace crema
