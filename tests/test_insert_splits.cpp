// Split insertion: a blob read by several layers gets a Split layer and each
// reader its own copy; a loss blob that is also read keeps its loss on a
// copy nobody reads.
#include <gtest/gtest.h>

#include "crema/common.hpp"
#include "crema/format/insert_splits.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

TEST(InsertSplitsTest, NoSplitWhenEachBlobHasOneReader) {
  const NetParameter param = ParseNet(
      "layer { name: 'data' type: 'Input' top: 'data' }"
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip' }"
      "layer { name: 'relu' type: 'ReLU' bottom: 'ip' top: 'ip' }");
  NetParameter split;
  InsertSplits(param, &split);
  EXPECT_EQ(split.layer_size(), 3);
  EXPECT_EQ(split.DebugString(), param.DebugString());
}

TEST(InsertSplitsTest, SplitsABlobReadTwice) {
  const NetParameter param = ParseNet(
      "layer { name: 'data' type: 'Input' top: 'data' top: 'label' }"
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip' }"
      "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' }"
      "layer { name: 'acc' type: 'Accuracy' bottom: 'ip' bottom: 'label' top: 'acc' }");
  NetParameter split;
  InsertSplits(param, &split);
  ASSERT_EQ(split.layer_size(), 6);  // a split after 'data' for label, one after 'ip'
  const LayerParameter& label_split = split.layer(1);
  EXPECT_EQ(label_split.type(), "Split");
  EXPECT_EQ(label_split.name(), "label_data_1_split");
  EXPECT_EQ(label_split.bottom(0), "label");
  ASSERT_EQ(label_split.top_size(), 2);
  EXPECT_EQ(label_split.top(0), "label_data_1_split_0");
  EXPECT_EQ(split.layer(3).name(), "ip_ip_0_split");
  EXPECT_EQ(split.layer(4).bottom(0), "ip_ip_0_split_0");
  EXPECT_EQ(split.layer(4).bottom(1), "label_data_1_split_0");
  EXPECT_EQ(split.layer(5).bottom(0), "ip_ip_0_split_1");
  EXPECT_EQ(split.layer(5).bottom(1), "label_data_1_split_1");
}

TEST(InsertSplitsTest, InPlaceLayerReadsTheLatestProducer) {
  const NetParameter param = ParseNet(
      "layer { name: 'data' type: 'Input' top: 'data' }"
      "layer { name: 'relu' type: 'ReLU' bottom: 'data' top: 'data' }"
      "layer { name: 'a' type: 'AbsVal' bottom: 'data' top: 'a' }"
      "layer { name: 'b' type: 'AbsVal' bottom: 'data' top: 'b' }");
  NetParameter split;
  InsertSplits(param, &split);
  ASSERT_EQ(split.layer_size(), 5);
  EXPECT_EQ(split.layer(1).name(), "relu");
  EXPECT_EQ(split.layer(1).bottom(0), "data");  // the relu is the only reader of the input
  EXPECT_EQ(split.layer(2).name(), "data_relu_0_split");
  EXPECT_EQ(split.layer(3).bottom(0), "data_relu_0_split_0");
  EXPECT_EQ(split.layer(4).bottom(0), "data_relu_0_split_1");
}

TEST(InsertSplitsTest, LossBlobAlsoReadKeepsItsLossOnAnUnreadCopy) {
  const NetParameter param = ParseNet(
      "layer { name: 'data' type: 'Input' top: 'data' }"
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip' loss_weight: 2 }"
      "layer { name: 'use' type: 'AbsVal' bottom: 'ip' top: 'use' }");
  NetParameter split;
  InsertSplits(param, &split);
  ASSERT_EQ(split.layer_size(), 4);
  EXPECT_EQ(split.layer(1).loss_weight(0), 0.f);  // moved to the split
  const LayerParameter& ip_split = split.layer(2);
  ASSERT_EQ(ip_split.top_size(), 2);
  ASSERT_EQ(ip_split.loss_weight_size(), 2);
  EXPECT_EQ(ip_split.loss_weight(0), 2.f);
  EXPECT_EQ(ip_split.loss_weight(1), 0.f);
  EXPECT_EQ(split.layer(3).bottom(0), "ip_ip_0_split_1");
}

TEST(InsertSplitsTest, UnknownBottomNamesLayerAndBlob) {
  const NetParameter param = ParseNet(
      "layer { name: 'data' type: 'Input' top: 'data' }"
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'dat' top: 'ip' }");
  NetParameter split;
  try {
    InsertSplits(param, &split);
    FAIL() << "an unknown bottom must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'ip'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'dat'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crema
