// BoxAnnotatorOHEM: per image, the roi_per_img ROIs of largest loss keep
// their label and box weights (equal losses: the earlier ROI first), the rest
// get ignore_label and 0; bad ROIs and settings are named. Then R-FCN's
// online-hard-example tail as py-R-FCN's train_agnostic_ohem.prototxt writes
// it (SoftmaxWithLossOHEM, SmoothL1LossOHEM, Eltwise, BoxAnnotatorOHEM, the
// final losses with PRE_FIXED), against the losses computed here from the
// fork's formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "crema/layers/box_annotator_ohem_layer.hpp"
#include "crema/net.hpp"
#include "crema/util/io.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class BoxAnnotatorOHEMLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Five ROIs of images 0, 0, 1, 0, 1 with losses 0.5, 2, 1, 2, 0.1, labels
  // 1..5 and two box weights per ROI, (r + 1, 10 (r + 1)).
  BoxAnnotatorOHEMLayerTest()
      : rois_(std::vector<int>{5, 5, 1, 1}),
        losses_(std::vector<int>{5, 1, 1, 1}),
        labels_(std::vector<int>{5, 1, 1, 1}),
        weights_(std::vector<int>{5, 2, 1, 1}),
        bottom_{&rois_, &losses_, &labels_, &weights_},
        top_{&kept_labels_, &kept_weights_} {
    const std::vector<int> images{0, 0, 1, 0, 1};
    for (int r = 0; r < 5; ++r) {
      Dtype* row = rois_.mutable_cpu_data() + 5 * r;
      row[0] = images[r];
      row[1] = row[2] = 0;
      row[3] = row[4] = 8;
      weights_.mutable_cpu_data()[2 * r] = r + 1;
      weights_.mutable_cpu_data()[2 * r + 1] = 10 * (r + 1);
    }
    SetValues(&losses_, {0.5, 2, 1, 2, 0.1});
    SetValues(&labels_, {1, 2, 3, 4, 5});
  }
  LayerParameter Param(int roi_per_img) {
    LayerParameter param;
    param.set_name("annotator_detector");
    param.mutable_box_annotator_ohem_param()->set_roi_per_img(roi_per_img);
    return param;
  }
  void Run(int roi_per_img) {
    BoxAnnotatorOHEMLayer<Dtype> layer(Param(roi_per_img));
    layer.SetUp(bottom_, top_);
    layer.Forward(bottom_, top_);
  }
  std::vector<double> Values(const Blob<Dtype>& blob) {
    return std::vector<double>(blob.cpu_data(), blob.cpu_data() + blob.count());
  }
  Blob<Dtype> rois_, losses_, labels_, weights_, kept_labels_, kept_weights_;
  std::vector<Blob<Dtype>*> bottom_, top_;
};
TYPED_TEST_SUITE(BoxAnnotatorOHEMLayerTest, TestDtypesAndDevices);

// Two per image: image 0 keeps ROIs 1 and 3 (loss 2 each) and drops ROI 0;
// image 1 keeps both of its ROIs.
TYPED_TEST(BoxAnnotatorOHEMLayerTest, KeepsTheHardestPerImage) {
  this->Run(2);
  EXPECT_EQ(this->kept_labels_.shape(), (std::vector<int>{5, 1, 1, 1}));
  EXPECT_EQ(this->kept_weights_.shape(), (std::vector<int>{5, 2, 1, 1}));
  EXPECT_EQ(this->Values(this->kept_labels_), (std::vector<double>{-1, 2, 3, 4, 5}));
  EXPECT_EQ(this->Values(this->kept_weights_),
            (std::vector<double>{0, 0, 2, 20, 3, 30, 4, 40, 5, 50}));
}

// One per image: ROIs 1 and 3 tie at loss 2, and the earlier one is kept.
TYPED_TEST(BoxAnnotatorOHEMLayerTest, EqualLossesKeepTheEarlierRoi) {
  this->Run(1);
  EXPECT_EQ(this->Values(this->kept_labels_), (std::vector<double>{-1, 2, 3, -1, -1}));
  EXPECT_EQ(this->Values(this->kept_weights_),
            (std::vector<double>{0, 0, 2, 20, 3, 30, 0, 0, 0, 0}));
}

TYPED_TEST(BoxAnnotatorOHEMLayerTest, IgnoreLabelIsTheFilesAndRoisMayBeTwoAxes) {
  using Dtype = typename TypeParam::Dtype;
  this->rois_.Reshape(std::vector<int>{5, 5});
  this->losses_.Reshape(std::vector<int>{5});
  LayerParameter param = this->Param(1);
  param.mutable_box_annotator_ohem_param()->set_ignore_label(255);
  BoxAnnotatorOHEMLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_, this->top_);
  layer.Forward(this->bottom_, this->top_);
  EXPECT_EQ(this->Values(this->kept_labels_), (std::vector<double>{255, 2, 3, 255, 255}));
}

TYPED_TEST(BoxAnnotatorOHEMLayerTest, BadInputNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter unset;
  unset.set_name("annotator_detector");
  BoxAnnotatorOHEMLayer<Dtype> no_count(unset);
  ExpectSetUpError<Dtype>(&no_count, this->bottom_, this->top_, "roi_per_img must be given");
  Blob<Dtype> short_losses(std::vector<int>{4, 1, 1, 1});
  BoxAnnotatorOHEMLayer<Dtype> mismatched(this->Param(2));
  ExpectSetUpError<Dtype>(&mismatched,
                          {&this->rois_, &short_losses, &this->labels_, &this->weights_},
                          this->top_, "bottom 1 (the losses");
  this->rois_.mutable_cpu_data()[5] = -1;  // ROI 1 names image -1
  BoxAnnotatorOHEMLayer<Dtype> layer(this->Param(2));
  layer.SetUp(this->bottom_, this->top_);
  try {
    layer.Forward(this->bottom_, this->top_);
    FAIL() << "an ROI naming image -1 must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'annotator_detector'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ROI 1 names image -1"), std::string::npos) << e.what();
  }
}

// The OHEM tail of py-R-FCN's train_agnostic_ohem.prototxt, its layers as
// the file writes them, fed by an Input layer in the shapes py-R-FCN's
// proposal target layer gives (R x C x 1 x 1).
const char kRfcnOhemTail[] = R"(
name: "rfcn_ohem_tail"
layer { name: "inputs" type: "Input"
  top: "cls_score" top: "labels" top: "bbox_pred" top: "bbox_targets"
  top: "bbox_inside_weights" top: "bbox_outside_weights" top: "rois"
  input_param { shape { dim: 6 dim: 3 dim: 1 dim: 1 } shape { dim: 6 dim: 1 dim: 1 dim: 1 }
                shape { dim: 6 dim: 8 dim: 1 dim: 1 } shape { dim: 6 dim: 8 dim: 1 dim: 1 }
                shape { dim: 6 dim: 8 dim: 1 dim: 1 } shape { dim: 6 dim: 8 dim: 1 dim: 1 }
                shape { dim: 6 dim: 5 dim: 1 dim: 1 } } }
layer {
   name: "per_roi_loss_cls"
   type: "SoftmaxWithLossOHEM"
   bottom: "cls_score"
   bottom: "labels"
   top: "temp_loss_cls"
   top: "temp_prob_cls"
   top: "per_roi_loss_cls"
   loss_weight: 0
   loss_weight: 0
   loss_weight: 0
   propagate_down: false
   propagate_down: false
}
layer {
   name: "per_roi_loss_bbox"
   type: "SmoothL1LossOHEM"
   bottom: "bbox_pred"
   bottom: "bbox_targets"
   bottom: "bbox_inside_weights"
   top: "temp_loss_bbox"
   top: "per_roi_loss_bbox"
   loss_weight: 0
   loss_weight: 0
   propagate_down: false
   propagate_down: false
   propagate_down: false
}
layer {
   name: "per_roi_loss"
   type: "Eltwise"
   bottom: "per_roi_loss_cls"
   bottom: "per_roi_loss_bbox"
   top: "per_roi_loss"
   propagate_down: false
   propagate_down: false
}
layer {
   bottom: "rois"
   bottom: "per_roi_loss"
   bottom: "labels"
   bottom: "bbox_inside_weights"
   top: "labels_ohem"
   top: "bbox_loss_weights_ohem"
   name: "annotator_detector"
   type: "BoxAnnotatorOHEM"
   box_annotator_ohem_param {
        roi_per_img: 3
        ignore_label: -1
   }
   propagate_down: false
   propagate_down: false
   propagate_down: false
   propagate_down: false
}
layer {
   name: "silence"
   type: "Silence"
   bottom: "bbox_outside_weights"
   bottom: "temp_loss_cls"
   bottom: "temp_prob_cls"
   bottom: "temp_loss_bbox"
}
layer {
   name: "loss"
   type: "SoftmaxWithLoss"
   bottom: "cls_score"
   bottom: "labels_ohem"
   top: "loss_cls"
   loss_weight: 1
   loss_param {
        ignore_label: -1
   }
   propagate_down: true
   propagate_down: false
}
layer {
   name: "loss_bbox"
   type: "SmoothL1LossOHEM"
   bottom: "bbox_pred"
   bottom: "bbox_targets"
   bottom: "bbox_loss_weights_ohem"
   top: "loss_bbox"
   loss_weight: 1
   loss_param {
        normalization: PRE_FIXED
        pre_fixed_normalizer: 128
   }
   propagate_down: true
   propagate_down: false
   propagate_down: false
}
)";

double SmoothL1(double x) { return std::abs(x) < 1 ? 0.5 * x * x : std::abs(x) - 0.5; }

TEST(RfcnOhemNetTest, TheForkFilesTailTrainsOnTheHardestRois) {
  using Dtype = float;
  NetParameter param;
  ReadProtoFromString(kRfcnOhemTail, "rfcn ohem tail", &param);
  param.mutable_state()->set_phase(TRAIN);
  param.set_force_backward(true);  // the scores come from an Input layer here
  Net<Dtype> net(param);
  const int rois = 6, classes = 3, coords = 8;
  const std::vector<int> labels{0, 1, 2, 0, 1, 0};
  auto fill = [&net](const char* name, const std::function<double(int)>& value) {
    Blob<Dtype>* blob = net.blob_by_name(name).get();
    for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = Dtype(value(i));
  };
  fill("cls_score", [](int i) { return std::sin(1.7 * i); });
  fill("labels", [&labels](int i) { return labels[i]; });
  fill("bbox_pred", [](int i) { return 1.3 * std::cos(0.9 * i); });
  fill("bbox_targets", [](int i) { return 0.2 * (i % 5); });
  // Agnostic: foreground ROIs weigh their second four coordinates.
  fill("bbox_inside_weights", [&labels](int i) { return labels[i / 8] > 0 && i % 8 >= 4; });
  fill("bbox_outside_weights", [](int) { return 1; });
  fill("rois", [](int i) { return i % 5 == 0 ? 0 : 4 * (i % 5); });
  net.ClearParamDiffs();
  net.ForwardBackward();

  // The fork's formulas: each ROI's loss is -log softmax at its label plus
  // its weighted smooth L1 sum; the three largest keep their labels.
  const Dtype* score = net.blob_by_name("cls_score")->cpu_data();
  const Dtype* pred = net.blob_by_name("bbox_pred")->cpu_data();
  const Dtype* target = net.blob_by_name("bbox_targets")->cpu_data();
  const Dtype* inside = net.blob_by_name("bbox_inside_weights")->cpu_data();
  std::vector<double> cls(rois), box(rois), total(rois);
  for (int r = 0; r < rois; ++r) {
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += std::exp(double(score[r * classes + c]));
    cls[r] = -std::log(std::exp(double(score[r * classes + labels[r]])) / sum);
    for (int k = 0; k < coords; ++k) {
      const int i = r * coords + k;
      box[r] += SmoothL1(double(inside[i]) * (double(pred[i]) - target[i]));
    }
    total[r] = cls[r] + box[r];
  }
  std::vector<int> order(rois);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&total](int a, int b) { return total[a] > total[b]; });
  std::vector<bool> kept(rois, false);
  for (int k = 0; k < 3; ++k) kept[order[k]] = true;
  double loss_cls = 0, loss_box = 0;
  for (int r = 0; r < rois; ++r) {
    EXPECT_EQ(net.blob_by_name("labels_ohem")->cpu_data()[r], kept[r] ? labels[r] : -1) << r;
    if (!kept[r]) continue;
    loss_cls += cls[r] / 3;
    loss_box += box[r] / 128;
  }
  EXPECT_NEAR(net.blob_by_name("loss_cls")->cpu_data()[0], loss_cls, 1e-5);
  EXPECT_NEAR(net.blob_by_name("loss_bbox")->cpu_data()[0], loss_box, 1e-6);
  EXPECT_NEAR(net.blob_by_name("per_roi_loss")->cpu_data()[order[0]], total[order[0]], 1e-5);
  // Only the kept ROIs' scores get a gradient.
  const Dtype* score_diff = net.blob_by_name("cls_score")->cpu_diff();
  for (int r = 0; r < rois; ++r) {
    double magnitude = 0;
    for (int c = 0; c < classes; ++c) magnitude += std::abs(double(score_diff[r * classes + c]));
    if (kept[r]) {
      EXPECT_GT(magnitude, 0) << r;
    } else {
      EXPECT_EQ(magnitude, 0) << r;
    }
  }
}

}  // namespace
}  // namespace crema
