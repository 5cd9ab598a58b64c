// Silence: no tops, a zero loss, bottom diffs zeroed exactly where asked, and
// refusal of a top or of no bottom at all.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/layers/silence_layer.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class SilenceLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  SilenceLayerTest()
      : first_(new Blob<Dtype>(std::vector<int>{2, 3})),
        second_(new Blob<Dtype>(std::vector<int>{4})) {
    cpu_set(first_->count(), Dtype(5), first_->mutable_cpu_diff());
    cpu_set(second_->count(), Dtype(5), second_->mutable_cpu_diff());
    bottom_vec_ = {first_.get(), second_.get()};
  }

  LayerParameter NamedParam() const {
    LayerParameter param;
    param.set_name("silence1");
    return param;
  }

  std::unique_ptr<Blob<Dtype>> first_, second_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(SilenceLayerTest, TestDtypesAndDevices);

TYPED_TEST(SilenceLayerTest, ForwardHasNoLoss) {
  using Dtype = typename TypeParam::Dtype;
  SilenceLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(layer.Forward(this->bottom_vec_, this->top_vec_), Dtype(0));
}

TYPED_TEST(SilenceLayerTest, BackwardZeroesTheAskedDiffs) {
  using Dtype = typename TypeParam::Dtype;
  SilenceLayer<Dtype> layer(this->NamedParam());
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->first_->count(); ++i) {
    EXPECT_EQ(this->first_->cpu_diff()[i], Dtype(0)) << i;
  }
  for (int i = 0; i < this->second_->count(); ++i) {
    EXPECT_EQ(this->second_->cpu_diff()[i], Dtype(5)) << i;
  }
  layer.Backward(this->top_vec_, {false, true}, this->bottom_vec_);
  for (int i = 0; i < this->second_->count(); ++i) {
    EXPECT_EQ(this->second_->cpu_diff()[i], Dtype(0)) << i;
  }
}

TYPED_TEST(SilenceLayerTest, TopOrNoBottomIsRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> top;
  const std::vector<Blob<Dtype>*> one_top{&top}, no_blobs;
  for (const auto& bottom_and_top :
       {std::make_pair(this->bottom_vec_, one_top), std::make_pair(no_blobs, no_blobs)}) {
    SilenceLayer<Dtype> layer(this->NamedParam());
    try {
      layer.SetUp(bottom_and_top.first, bottom_and_top.second);
      FAIL() << "the blob counts must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("silence1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("Silence"), std::string::npos) << e.what();
    }
  }
}

TYPED_TEST(SilenceLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Silence");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Silence");
}

}  // namespace
}  // namespace crema
