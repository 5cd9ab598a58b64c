// Accuracy: top-1/2/3 accuracy by hand (ties count against the true class),
// per-class accuracy, ignore_label, a spatial class axis, zero loss weight,
// and refused configurations (top_k, label count, label value, backward).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "crema/layers/accuracy_layer.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class AccuracyLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // The true class ranks 1st (item 0), 3rd (item 1), 3rd through a tie
  // (item 2) and 2nd (item 3).
  AccuracyLayerTest()
      : scores_(std::vector<int>{4, 3}),
        labels_(std::vector<int>{4}),
        bottom_vec_{&scores_, &labels_},
        top_vec_{&accuracy_} {
    SetValues(&scores_, {0.1, 0.7, 0.2,  //
                         0.5, 0.3, 0.2,  //
                         0.3, 0.4, 0.3,  //
                         0.6, 0.1, 0.3});
    SetValues(&labels_, {1, 2, 0, 2});
  }
  LayerParameter Param(int top_k) {
    LayerParameter param;
    param.set_name("acc");
    param.mutable_accuracy_param()->set_top_k(top_k);
    return param;
  }
  Dtype AccuracyWith(const LayerParameter& param) {
    AccuracyLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    EXPECT_EQ(layer.Forward(bottom_vec_, top_vec_), Dtype(0)) << "accuracy is no loss";
    return accuracy_.cpu_data()[0];
  }
  void ExpectSetUpErrorNaming(const LayerParameter& param, const std::string& part) {
    AccuracyLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec_, top_vec_);
      ADD_FAILURE() << "expected crema::Error mentioning " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("acc"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("Accuracy"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
  Blob<Dtype> scores_, labels_, accuracy_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(AccuracyLayerTest, TestDtypesAndDevices);

TYPED_TEST(AccuracyLayerTest, TopKByHand) {
  EXPECT_NEAR(this->AccuracyWith(this->Param(1)), 0.25, 1e-7);
  EXPECT_EQ(this->accuracy_.num_axes(), 0);
  EXPECT_NEAR(this->AccuracyWith(this->Param(2)), 0.5, 1e-7);
  EXPECT_NEAR(this->AccuracyWith(this->Param(3)), 1.0, 1e-7);
}

TYPED_TEST(AccuracyLayerTest, PerClassByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> per_class;
  std::vector<Blob<Dtype>*> tops{&this->accuracy_, &per_class};
  for (int top_k : {1, 2}) {
    AccuracyLayer<Dtype> layer(this->Param(top_k));
    layer.SetUp(this->bottom_vec_, tops);
    layer.Forward(this->bottom_vec_, tops);
    ASSERT_EQ(per_class.shape(), std::vector<int>{3});
    // Class 0: item 2; class 1: item 0; class 2: items 1 and 3.
    const double expected_top1[] = {0, 1, 0}, expected_top2[] = {0, 1, 0.5};
    const double* expected = top_k == 1 ? expected_top1 : expected_top2;
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(per_class.cpu_data()[c], expected[c], 1e-7) << "top " << top_k << " class " << c;
    }
  }
}

TYPED_TEST(AccuracyLayerTest, IgnoreLabel) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = this->Param(1);
  param.mutable_accuracy_param()->set_ignore_label(2);  // leaves items 0 (right) and 2 (wrong)
  EXPECT_NEAR(this->AccuracyWith(param), 0.5, 1e-7);
  // A class no kept item carries scores 0 in the per-class top.
  Blob<Dtype> per_class;
  std::vector<Blob<Dtype>*> tops{&this->accuracy_, &per_class};
  AccuracyLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, tops);
  layer.Forward(this->bottom_vec_, tops);
  EXPECT_EQ(per_class.cpu_data()[2], Dtype(0));
  SetValues(&this->labels_, {2, 2, 2, 2});
  EXPECT_EQ(this->AccuracyWith(param), Dtype(0)) << "nothing left to count";
}

// Scores (1, 3, 2) along axis 1: two positions, each with its own label.
TYPED_TEST(AccuracyLayerTest, SpatialClassAxis) {
  this->scores_.Reshape(std::vector<int>{1, 3, 2});
  this->labels_.Reshape(std::vector<int>{1, 2});
  SetValues(&this->scores_, {0.1, 0.5,    // class 0 at positions 0, 1
                             0.8, 0.2,    // class 1
                             0.1, 0.3});  // class 2
  SetValues(&this->labels_, {1, 2});      // position 0 right, position 1 second
  EXPECT_NEAR(this->AccuracyWith(this->Param(1)), 0.5, 1e-7);
  EXPECT_NEAR(this->AccuracyWith(this->Param(2)), 1.0, 1e-7);
}

TYPED_TEST(AccuracyLayerTest, RefusedConfigurations) {
  this->ExpectSetUpErrorNaming(this->Param(4), "top_k");
  LayerParameter axis = this->Param(1);
  axis.mutable_accuracy_param()->set_axis(2);
  this->ExpectSetUpErrorNaming(axis, "axis 2");
  this->labels_.Reshape(std::vector<int>{3});
  this->ExpectSetUpErrorNaming(this->Param(1), this->labels_.shape_string());
}

TYPED_TEST(AccuracyLayerTest, LabelOutOfRangeNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  this->labels_.mutable_cpu_data()[3] = 3;
  AccuracyLayer<Dtype> layer(this->Param(1));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  try {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    FAIL() << "label 3 of 3 classes must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("acc"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("label 3"), std::string::npos) << e.what();
  }
}

TYPED_TEST(AccuracyLayerTest, HasNoGradient) {
  using Dtype = typename TypeParam::Dtype;
  AccuracyLayer<Dtype> layer(this->Param(1));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(layer.loss(0), Dtype(0));
  EXPECT_FALSE(layer.AllowForceBackward(0));
  EXPECT_NO_THROW(layer.Backward(this->top_vec_, {false, false}, this->bottom_vec_));
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_), Error);
}

TYPED_TEST(AccuracyLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Accuracy");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Accuracy");
}

// A fraction or a NaN is no class: before, 1.5 counted as class 1 and -0.5
// as class 0.
TYPED_TEST(AccuracyLayerTest, FractionalLabelNamesTheValue) {
  using Dtype = typename TypeParam::Dtype;
  for (Dtype bad : {Dtype(1.5), Dtype(-0.5), Dtype(std::nan(""))}) {
    this->labels_.mutable_cpu_data()[3] = bad;
    AccuracyLayer<Dtype> layer(this->Param(1));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    try {
      layer.Forward(this->bottom_vec_, this->top_vec_);
      ADD_FAILURE() << "label " << bad << " must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("at position 3"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("whole number"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace crema
