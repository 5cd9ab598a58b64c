// ROIPooling (py-faster-rcnn): forward and backward values by hand (rounding
// of the scaled corners, clipping, an empty bin, bins that share a cell, the
// first maximum winning a tie), the gradient against finite differences, and
// refusal of bad parameters, shapes and ROI rows, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/roi_pooling_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

LayerParameter RoiPoolingParam(int pooled_h, int pooled_w, float spatial_scale) {
  LayerParameter param;
  param.set_name("roi_pool5");
  param.set_type("ROIPooling");
  param.mutable_roi_pooling_param()->set_pooled_h(pooled_h);
  param.mutable_roi_pooling_param()->set_pooled_w(pooled_w);
  param.mutable_roi_pooling_param()->set_spatial_scale(spatial_scale);
  return param;
}

template <typename TypeParam>
class ROIPoolingLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Two 4 x 4 images of one channel: image 0 holds h * 4 + w, image 1 holds
  // 100 - (h * 4 + w).
  ROIPoolingLayerTest() : features_(2, 1, 4, 4), rois_(std::vector<int>{4, 5}) {
    for (int i = 0; i < 16; ++i) {
      features_.mutable_cpu_data()[i] = Dtype(i);
      features_.mutable_cpu_data()[16 + i] = Dtype(100 - i);
    }
    SetValues(&rois_, {
                          0, 0, 0, 6,  6,   // cells 0..3 both ways: bins [0,2) and [2,4)
                          1, 2, 2, 4,  7,   // x cells 1..2; y cells 1..4 (3.5 rounds up)
                          0, 6, 6, 10, 10,  // cells 3..5: only cell 3 is on the map
                          0, 0, 0, 4,  0,   // x cells 0..2: bins [0,2) and [1,3) share 1
                      });
  }
  std::vector<Blob<Dtype>*> Bottoms() { return {&features_, &rois_}; }
  std::vector<Blob<Dtype>*> Tops() { return {&top_}; }
  void SetUpAndForward(Layer<Dtype>* layer) {
    layer->SetUp(Bottoms(), Tops());
    layer->Forward(Bottoms(), Tops());
  }
  // The message of the error forward throws with ROI row `row` set to roi.
  std::string ForwardErrorWithRoi(int row, const std::vector<double>& roi) {
    for (int i = 0; i < 5; ++i) rois_.mutable_cpu_data()[row * 5 + i] = Dtype(roi[i]);
    ROIPoolingLayer<Dtype> layer(RoiPoolingParam(2, 2, 0.5));
    return ErrorMessageOf([&] { SetUpAndForward(&layer); });
  }

  Blob<Dtype> features_, rois_, top_;
};
TYPED_TEST_SUITE(ROIPoolingLayerTest, TestDtypesAndDevices);

TYPED_TEST(ROIPoolingLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ROIPoolingLayer<Dtype> layer(RoiPoolingParam(2, 2, 0.5));
  this->SetUpAndForward(&layer);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{4, 1, 2, 2}));
  const std::vector<Dtype> top(this->top_.cpu_data(), this->top_.cpu_data() + 16);
  EXPECT_EQ(top, (std::vector<Dtype>{5, 7, 13, 15,    //
                                     95, 94, 87, 86,  //
                                     15, 0, 0, 0,     // three bins hold no cell of the map
                                     1, 2, 1, 2}));
}

TYPED_TEST(ROIPoolingLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  ROIPoolingLayer<Dtype> layer(RoiPoolingParam(2, 2, 0.5));
  this->SetUpAndForward(&layer);
  const std::vector<Dtype> top_diff{1,   2,   3,   4,   10,   20,   30,   40,
                                    100, 200, 300, 400, 1000, 2000, 3000, 4000};
  std::copy(top_diff.begin(), top_diff.end(), this->top_.mutable_cpu_diff());
  layer.Backward(this->Tops(), {true, false}, this->Bottoms());
  std::vector<Dtype> expected(32, 0);
  expected[5] = 1;
  expected[7] = 2;
  expected[13] = 3;
  expected[15] = 4 + 100;  // ROI 0 and ROI 2 both took cell 15
  expected[16 + 5] = 10;
  expected[16 + 6] = 20;
  expected[16 + 13] = 30;
  expected[16 + 14] = 40;
  expected[1] = 1000 + 3000;  // ROI 3's bins share cells 1 and 2
  expected[2] = 2000 + 4000;
  const Dtype* diff = this->features_.cpu_diff();
  EXPECT_EQ(std::vector<Dtype>(diff, diff + 32), expected);
}

TYPED_TEST(ROIPoolingLayerTest, FirstMaximumWinsATie) {
  using Dtype = typename TypeParam::Dtype;
  cpu_set(this->features_.count(), Dtype(7), this->features_.mutable_cpu_data());
  this->rois_.Reshape(std::vector<int>{1, 5});
  SetValues(&this->rois_, {1, 2, 2, 6, 6});  // cells 1..3 of image 1
  ROIPoolingLayer<Dtype> layer(RoiPoolingParam(1, 1, 0.5));
  this->SetUpAndForward(&layer);
  EXPECT_EQ(this->top_.cpu_data()[0], Dtype(7));
  this->top_.mutable_cpu_diff()[0] = 5;
  layer.Backward(this->Tops(), {true, false}, this->Bottoms());
  const Dtype* diff = this->features_.cpu_diff();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(diff[i], i == 16 + 1 * 4 + 1 ? Dtype(5) : Dtype(0)) << i;
}

TYPED_TEST(ROIPoolingLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  // Distinct values 0.1 apart, so no finite-difference step changes a maximum.
  Blob<Dtype> features(2, 3, 5, 6);
  std::vector<int> order(features.count());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(1701));
  for (int i = 0; i < features.count(); ++i) features.mutable_cpu_data()[i] = Dtype(0.1 * order[i]);
  Blob<Dtype> rois(std::vector<int>{3, 5}), top;
  SetValues(&rois, {0, 0, 0, 10, 8,  //
                    1, 2, 4, 7, 9,   //
                    1, 6, 0, 20, 4});
  std::vector<Blob<Dtype>*> bottom{&features, &rois}, top_vec{&top};
  ROIPoolingLayer<Dtype> layer(RoiPoolingParam(3, 2, 0.5));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradient(&layer, bottom, top_vec, 0);
}

TYPED_TEST(ROIPoolingLayerTest, NoRois) {
  using Dtype = typename TypeParam::Dtype;
  this->rois_.Reshape(std::vector<int>{0, 5});
  ROIPoolingLayer<Dtype> layer(RoiPoolingParam(2, 2, 0.5));
  this->SetUpAndForward(&layer);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{0, 1, 2, 2}));
  layer.Backward(this->Tops(), {true, false}, this->Bottoms());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(this->features_.cpu_diff()[i], Dtype(0));
}

TYPED_TEST(ROIPoolingLayerTest, BadParametersRefused) {
  using Dtype = typename TypeParam::Dtype;
  for (const LayerParameter& param :
       {RoiPoolingParam(0, 2, 0.5), RoiPoolingParam(2, 0, 0.5), RoiPoolingParam(2, 2, 0),
        RoiPoolingParam(2, 2, -1), RoiPoolingParam(2, 2, std::numeric_limits<float>::infinity()),
        RoiPoolingParam(2, 2, std::numeric_limits<float>::quiet_NaN())}) {
    ROIPoolingLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->Bottoms(), this->Tops());
  }
}

TYPED_TEST(ROIPoolingLayerTest, BadShapesRefused) {
  using Dtype = typename TypeParam::Dtype;
  this->rois_.Reshape(std::vector<int>{4, 4});
  ROIPoolingLayer<Dtype> layer(RoiPoolingParam(2, 2, 0.5));
  ExpectSetUpError<Dtype>(&layer, this->Bottoms(), this->Tops(), "[R, 5]");
  this->rois_.Reshape(std::vector<int>{4, 5, 1, 1});  // trailing axes of 1 are fine
  ROIPoolingLayer<Dtype> accepting(RoiPoolingParam(2, 2, 0.5));
  accepting.SetUp(this->Bottoms(), this->Tops());
  this->features_.Reshape(std::vector<int>{2, 16});
  ROIPoolingLayer<Dtype> flat(RoiPoolingParam(2, 2, 0.5));
  ExpectSetUpError<Dtype>(&flat, this->Bottoms(), this->Tops(), "[N, C, H, W]");
}

TYPED_TEST(ROIPoolingLayerTest, BadRoiRowsRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::vector<double>, std::string>> cases = {
      {{2, 0, 0, 4, 4}, "image index 2"},     {{-1, 0, 0, 4, 4}, "image index -1"},
      {{0.5, 0, 0, 4, 4}, "image index 0.5"}, {{nan, 0, 0, 4, 4}, "image index"},
      {{0, nan, 0, 4, 4}, "not finite"},      {{0, 0, 0, 4, inf}, "not finite"},
      {{0, 6, 0, 2, 4}, "no cell"},     // x2 before x1
      {{0, 8, 0, 12, 4}, "wholly outside the image"},  // right of the image's 8 pixels
      {{0, 0, -9, 4, -2}, "wholly outside the image"},  // above it
      {{0, -3, 0, -0.8, 4}, "wholly outside the image"},  // left of it, though its
                                                          // rounded cells reach column 0
      {{0, 0, 0, 1e30, 4}, "too far"},  // no int holds the scaled corner
  };
  for (const auto& bad : cases) {
    const std::string message = this->ForwardErrorWithRoi(1, bad.first);
    EXPECT_NE(message.find("roi_pool5"), std::string::npos) << message;
    EXPECT_NE(message.find("ROIPooling"), std::string::npos) << message;
    EXPECT_NE(message.find("ROI 1 "), std::string::npos) << message;
    EXPECT_NE(message.find(bad.second), std::string::npos) << message;
  }
}

TYPED_TEST(ROIPoolingLayerTest, RoiPartlyOutsideTheImageAccepted) {
  using Dtype = typename TypeParam::Dtype;
  // Pixels -3 to 0.8: columns round(-1.5) = -2 to round(0.4) = 0 (bins
  // [-2, 0) and [-1, 1)), rows 0 to 1: only column 0 is on the map.
  EXPECT_EQ(this->ForwardErrorWithRoi(1, {1, -3, 0, 0.8, 2}), "");
  const Dtype* top = this->top_.cpu_data() + 4;
  EXPECT_EQ(std::vector<Dtype>(top, top + 4), (std::vector<Dtype>{0, 100, 0, 96}));
}

TYPED_TEST(ROIPoolingLayerTest, RoiInsideTheImageButPastTheMapPoolsZeros) {
  using Dtype = typename TypeParam::Dtype;
  // Pixels 7 to 7.9 of the image's 8 lie in it, but round to cell 4 of the
  // 4 columns: every bin is empty and pools 0, as in the fork.
  EXPECT_EQ(this->ForwardErrorWithRoi(1, {0, 7, 0, 7.9, 4}), "");
  const Dtype* top = this->top_.cpu_data() + 4;
  EXPECT_EQ(std::vector<Dtype>(top, top + 4), (std::vector<Dtype>{0, 0, 0, 0}));
}

TYPED_TEST(ROIPoolingLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(RoiPoolingParam(2, 2, 1))->type(), "ROIPooling");
}

}  // namespace
}  // namespace crema
