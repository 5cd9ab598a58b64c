// PSROIPooling (R-FCN): forward and backward values by hand (rounding of the
// corners before scaling, the channel of each bin, clipping, an empty bin,
// gradients of two ROIs meeting in a cell), the gradient against finite
// differences, and refusal of bad parameters, shapes and ROI rows, on every
// device.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "crema/layers/psroi_pooling_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

LayerParameter PsRoiPoolingParam(int output_dim, int group_size, float spatial_scale) {
  LayerParameter param;
  param.set_name("psroipooled_cls_rois");
  param.set_type("PSROIPooling");
  param.mutable_psroi_pooling_param()->set_output_dim(output_dim);
  param.mutable_psroi_pooling_param()->set_group_size(group_size);
  param.mutable_psroi_pooling_param()->set_spatial_scale(spatial_scale);
  return param;
}

template <typename TypeParam>
class PSROIPoolingLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // One image of 4 channels (output_dim 1, group_size 2) of 4 x 4 cells:
  // channel k holds 100 * k + h * 4 + w.
  PSROIPoolingLayerTest() : maps_(1, 4, 4, 4), rois_(std::vector<int>{3, 5}) {
    for (int i = 0; i < maps_.count(); ++i) {
      maps_.mutable_cpu_data()[i] = Dtype(100 * (i / 16) + i % 16);
    }
    SetValues(&rois_, {
                          0, 0, 0, 7, 7,    // cells [0, 4) both ways: bins [0, 2), [2, 4)
                          0, 2, 2, 5, 3,    // x cells [1, 3); y cells [1, 2), both bins row 1
                          0, 5.5, 0, 9, 1,  // x cells [3, 5) (5.5 rounds up): bin 1 off the map
                      });
  }
  std::vector<Blob<Dtype>*> Bottoms() { return {&maps_, &rois_}; }
  std::vector<Blob<Dtype>*> Tops() { return {&top_}; }
  void SetUpAndForward(Layer<Dtype>* layer) {
    layer->SetUp(Bottoms(), Tops());
    layer->Forward(Bottoms(), Tops());
  }
  // The message of the error forward throws with ROI row `row` set to roi.
  std::string ForwardErrorWithRoi(int row, const std::vector<double>& roi) {
    for (int i = 0; i < 5; ++i) rois_.mutable_cpu_data()[row * 5 + i] = Dtype(roi[i]);
    PSROIPoolingLayer<Dtype> layer(PsRoiPoolingParam(1, 2, 0.5));
    return ErrorMessageOf([&] { SetUpAndForward(&layer); });
  }

  Blob<Dtype> maps_, rois_, top_;
};
TYPED_TEST_SUITE(PSROIPoolingLayerTest, TestDtypesAndDevices);

TYPED_TEST(PSROIPoolingLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  PSROIPoolingLayer<Dtype> layer(PsRoiPoolingParam(1, 2, 0.5));
  this->SetUpAndForward(&layer);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{3, 1, 2, 2}));
  const std::vector<Dtype> top(this->top_.cpu_data(), this->top_.cpu_data() + 12);
  // Bin (gh, gw) reads channel gh * 2 + gw.
  EXPECT_EQ(top, (std::vector<Dtype>{2.5, 104.5, 210.5, 312.5,  //
                                     5, 106, 205, 306,          //
                                     3, 0, 203, 0}));
}

TYPED_TEST(PSROIPoolingLayerTest, BackwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  PSROIPoolingLayer<Dtype> layer(PsRoiPoolingParam(1, 2, 0.5));
  this->SetUpAndForward(&layer);
  const std::vector<Dtype> top_diff{4, 8, 12, 16, 10, 20, 30, 40, 100, 200, 300, 400};
  std::copy(top_diff.begin(), top_diff.end(), this->top_.mutable_cpu_diff());
  layer.Backward(this->Tops(), {true, false}, this->Bottoms());
  std::vector<Dtype> expected(64, 0);
  for (int cell : {0, 1, 4, 5}) expected[cell] = 1;           // 4 over 4 cells
  for (int cell : {2, 3, 6, 7}) expected[16 + cell] = 2;      // 8 over 4 cells
  for (int cell : {8, 9, 12, 13}) expected[32 + cell] = 3;    // 12 over 4 cells
  for (int cell : {10, 11, 14, 15}) expected[48 + cell] = 4;  // 16 over 4 cells
  expected[5] += 10;                                          // ROI 1's bins are single cells
  expected[16 + 6] += 20;
  expected[32 + 5] += 30;
  expected[48 + 6] += 40;
  expected[3] += 100;  // ROI 2's empty bins pass nothing on
  expected[32 + 3] += 300;
  const Dtype* diff = this->maps_.cpu_diff();
  EXPECT_EQ(std::vector<Dtype>(diff, diff + 64), expected);
}

TYPED_TEST(PSROIPoolingLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> maps(2, 2 * 9, 5, 6), rois(std::vector<int>{3, 5}), top;
  FillGaussian(&maps);
  SetValues(&rois, {0, 0, 0, 10, 8,  //
                    1, 2, 4, 7, 9,   //
                    1, 6, 0, 20, 4});
  std::vector<Blob<Dtype>*> bottom{&maps, &rois}, top_vec{&top};
  PSROIPoolingLayer<Dtype> layer(PsRoiPoolingParam(2, 3, 0.5));
  GradientChecker<Dtype> checker(1e-2, 1e-3, 1701);
  checker.CheckGradient(&layer, bottom, top_vec, 0);
}

TYPED_TEST(PSROIPoolingLayerTest, NoRois) {
  using Dtype = typename TypeParam::Dtype;
  this->rois_.Reshape(std::vector<int>{0, 5});
  PSROIPoolingLayer<Dtype> layer(PsRoiPoolingParam(1, 2, 0.5));
  this->SetUpAndForward(&layer);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{0, 1, 2, 2}));
  layer.Backward(this->Tops(), {true, false}, this->Bottoms());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(this->maps_.cpu_diff()[i], Dtype(0));
}

TYPED_TEST(PSROIPoolingLayerTest, BadParametersRefused) {
  using Dtype = typename TypeParam::Dtype;
  for (const LayerParameter& param :
       {PsRoiPoolingParam(0, 2, 0.5), PsRoiPoolingParam(1, 0, 0.5), PsRoiPoolingParam(-1, 2, 0.5),
        PsRoiPoolingParam(1, -2, 0.5), PsRoiPoolingParam(1, 2, 0), PsRoiPoolingParam(1, 2, -1),
        PsRoiPoolingParam(1, 2, std::numeric_limits<float>::infinity()),
        PsRoiPoolingParam(1, 2, std::numeric_limits<float>::quiet_NaN()),
        PsRoiPoolingParam(1 << 20, 1 << 10, 1)}) {
    PSROIPoolingLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->Bottoms(), this->Tops());
  }
}

TYPED_TEST(PSROIPoolingLayerTest, BadShapesRefused) {
  using Dtype = typename TypeParam::Dtype;
  PSROIPoolingLayer<Dtype> three_groups(PsRoiPoolingParam(1, 3, 0.5));
  ExpectSetUpError<Dtype>(&three_groups, this->Bottoms(), this->Tops(), "needs 9");
  PSROIPoolingLayer<Dtype> two_outputs(PsRoiPoolingParam(2, 2, 0.5));
  ExpectSetUpError<Dtype>(&two_outputs, this->Bottoms(), this->Tops(), "needs 8");
  this->rois_.Reshape(std::vector<int>{3, 4});
  PSROIPoolingLayer<Dtype> layer(PsRoiPoolingParam(1, 2, 0.5));
  ExpectSetUpError<Dtype>(&layer, this->Bottoms(), this->Tops(), "[R, 5]");
  this->maps_.Reshape(std::vector<int>{1, 4, 16});
  this->rois_.Reshape(std::vector<int>{3, 5});
  PSROIPoolingLayer<Dtype> flat(PsRoiPoolingParam(1, 2, 0.5));
  ExpectSetUpError<Dtype>(&flat, this->Bottoms(), this->Tops(), "[N, C, H, W]");
}

TYPED_TEST(PSROIPoolingLayerTest, BadRoiRowsRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<std::vector<double>, std::string>> cases = {
      {{1, 0, 0, 4, 4}, "image index 1"}, {{0.25, 0, 0, 4, 4}, "image index 0.25"},
      {{0, 0, nan, 4, 4}, "not finite"},  {{0, 6, 0, 2, 4}, "no cell"},  // x2 before x1
      {{0, 8, 0, 12, 4}, "wholly outside the image"},  // right of the image's 8 pixels
      {{0, 0, -9, 4, -3}, "wholly outside the image"},  // above it
      {{0, 0, 0, 1e30, 4}, "too far"},  // no int holds the scaled corner
  };
  for (const auto& bad : cases) {
    const std::string message = this->ForwardErrorWithRoi(2, bad.first);
    EXPECT_NE(message.find("psroipooled_cls_rois"), std::string::npos) << message;
    EXPECT_NE(message.find("PSROIPooling"), std::string::npos) << message;
    EXPECT_NE(message.find("ROI 2 "), std::string::npos) << message;
    EXPECT_NE(message.find(bad.second), std::string::npos) << message;
  }
}

TYPED_TEST(PSROIPoolingLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(PsRoiPoolingParam(1, 2, 1))->type(),
               "PSROIPooling");
}

}  // namespace
}  // namespace crema
