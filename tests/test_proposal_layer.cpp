// Proposal (py-faster-rcnn's rpn.proposal_layer): the anchors of
// generate_anchors, decoding, clipping, the minimum size, sorting, the two
// cuts and non-maximum suppression on small inputs worked out by hand;
// refusal of bad parameters, shapes and inputs; and the Python-typed layer of
// py-faster-rcnn's deploy nets built as this one from its param_str, on every
// device.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "crema/layers/proposal_layer.hpp"
#include "crema/layers/python_stand_ins.hpp"
#include "crema/net.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

// One anchor per cell: [0, 0, 15, 15] (base_size 16, ratio 1, scale 1),
// shifted by 16 pixels per cell.
LayerParameter OneAnchorParam(int min_size) {
  LayerParameter param;
  param.set_name("proposal");
  param.set_type("Proposal");
  ProposalParameter* proposal = param.mutable_proposal_param();
  proposal->set_feat_stride(16);
  proposal->set_base_size(16);
  proposal->set_min_size(min_size);
  proposal->add_ratio(1);
  proposal->add_scale(1);
  return param;
}

LayerParameter PythonProposalParam(const std::string& param_str) {
  LayerParameter param;
  param.set_name("proposal");
  param.set_type("Python");
  param.mutable_python_param()->set_module("rpn.proposal_layer");
  param.mutable_python_param()->set_layer("ProposalLayer");
  param.mutable_python_param()->set_param_str(param_str);
  return param;
}

template <typename TypeParam>
class ProposalLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Four cells in a row, one anchor each, scores 0.9, 0.8, 0.7, 0.85:
  //   cell 0, no deltas:              [0, 0, 16, 16] (x2 = centre + width / 2)
  //   cell 1, dx 0.25, width x 2:     [12, 0, 44, 16], clipped to [12, 0, 39, 16]
  //   cell 2, no deltas:              [32, 0, 48, 16], clipped to [32, 0, 39, 16] (8 wide)
  //   cell 3, dx -1.75, width x 2:    [12, 0, 44, 16] again, clipped likewise
  // in an image of 20 x 40.
  ProposalLayerTest() : scores_(1, 2, 1, 4), deltas_(1, 4, 1, 4), im_info_(std::vector<int>{1, 3}) {
    SetValues(&scores_, {0, 0, 0, 0, 0.9, 0.8, 0.7, 0.85});
    const double log2 = std::log(2.0);
    SetValues(&deltas_, {0, 0.25, 0, -1.75,  // dx
                         0, 0, 0, 0,         // dy
                         0, log2, 0, log2,   // dw
                         0, 0, 0, 0});       // dh
    SetValues(&im_info_, {20, 40, 1});
  }
  std::vector<Blob<Dtype>*> Bottoms() { return {&scores_, &deltas_, &im_info_}; }
  // Runs the layer (both tops) and returns the rois, row by row.
  std::vector<std::vector<Dtype>> Rois(const LayerParameter& param) {
    std::shared_ptr<Layer<Dtype>> layer = LayerRegistry<Dtype>::CreateLayer(param);
    std::vector<Blob<Dtype>*> tops{&rois_, &top_scores_};
    layer->SetUp(Bottoms(), tops);
    layer->Forward(Bottoms(), tops);
    EXPECT_EQ(rois_.num_axes(), 2);
    EXPECT_EQ(rois_.shape(1), 5);
    EXPECT_EQ(top_scores_.shape(), (std::vector<int>{rois_.shape(0), 1}));
    std::vector<std::vector<Dtype>> rows;
    for (int r = 0; r < rois_.shape(0); ++r) {
      rows.emplace_back(rois_.cpu_data() + r * 5, rois_.cpu_data() + r * 5 + 5);
    }
    return rows;
  }
  std::vector<Dtype> Scores() const {
    return std::vector<Dtype>(top_scores_.cpu_data(), top_scores_.cpu_data() + top_scores_.count());
  }

  Blob<Dtype> scores_, deltas_, im_info_, rois_, top_scores_;
};
TYPED_TEST_SUITE(ProposalLayerTest, TestDtypesAndDevices);

template <typename Dtype>
void ExpectRows(const std::vector<std::vector<Dtype>>& rows,
                const std::vector<std::vector<double>>& expected) {
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(rows[r][i], expected[r][i], 1e-4) << r << ", " << i;
  }
}

TEST(GenerateAnchorsTest, PyFasterRcnnDefaults) {
  const std::vector<std::array<double, 4>> expected = {
      {-84, -40, 99, 55}, {-176, -88, 191, 103},  {-360, -184, 375, 199},
      {-56, -56, 71, 71}, {-120, -120, 135, 135}, {-248, -248, 263, 263},
      {-36, -80, 51, 95}, {-80, -168, 95, 183},   {-168, -344, 183, 359}};
  EXPECT_EQ(GenerateAnchors(16, {0.5f, 1.0f, 2.0f}, {8.0f, 16.0f, 32.0f}), expected);
}

TEST(GenerateAnchorsTest, HalvesRoundToEvenAsNumpyDoes) {
  // base 18, ratio 0.5: width round(sqrt(648)) = 25, height round(12.5) = 12.
  const std::vector<std::array<double, 4>> expected = {{-3.5, 3, 20.5, 14}};
  EXPECT_EQ(GenerateAnchors(18, {0.5f}, {1.0f}), expected);
}

TYPED_TEST(ProposalLayerTest, ForwardByHand) {
  // Cell 2 is under the minimum size 10; cell 1 goes, its box the same as
  // cell 3's, which scores higher.
  ExpectRows(this->Rois(OneAnchorParam(10)), {{0, 0, 0, 16, 16}, {0, 12, 0, 39, 16}});
  EXPECT_EQ(this->Scores(), (std::vector<typename TypeParam::Dtype>{
                                typename TypeParam::Dtype(0.9), typename TypeParam::Dtype(0.85)}));
}

TYPED_TEST(ProposalLayerTest, MinimumSizeScalesWithTheImage) {
  this->im_info_.mutable_cpu_data()[2] = 0.5;  // 10 * 0.5: cell 2's 8 pixels suffice
  ExpectRows(this->Rois(OneAnchorParam(10)),
             {{0, 0, 0, 16, 16}, {0, 12, 0, 39, 16}, {0, 32, 0, 39, 16}});
}

TYPED_TEST(ProposalLayerTest, ThresholdOneKeepsEqualBoxes) {
  LayerParameter param = OneAnchorParam(10);
  param.mutable_proposal_param()->set_nms_thresh(1);  // suppresses only IoU above 1
  ExpectRows(this->Rois(param), {{0, 0, 0, 16, 16}, {0, 12, 0, 39, 16}, {0, 12, 0, 39, 16}});
}

TYPED_TEST(ProposalLayerTest, CutsBeforeAndAfterSuppression) {
  LayerParameter pre = OneAnchorParam(0);
  pre.mutable_proposal_param()->set_pre_nms_topn(2);  // cells 0 and 3
  ExpectRows(this->Rois(pre), {{0, 0, 0, 16, 16}, {0, 12, 0, 39, 16}});
  LayerParameter post = OneAnchorParam(0);
  post.mutable_proposal_param()->set_post_nms_topn(1);
  ExpectRows(this->Rois(post), {{0, 0, 0, 16, 16}});
  LayerParameter all = OneAnchorParam(0);
  all.mutable_proposal_param()->set_pre_nms_topn(0);  // 0: no cut
  all.mutable_proposal_param()->set_post_nms_topn(0);
  ExpectRows(this->Rois(all), {{0, 0, 0, 16, 16}, {0, 12, 0, 39, 16}, {0, 32, 0, 39, 16}});
}

TYPED_TEST(ProposalLayerTest, EqualScoresKeepAnchorOrder) {
  using Dtype = typename TypeParam::Dtype;
  cpu_set(this->scores_.count(), Dtype(0.5), this->scores_.mutable_cpu_data());
  cpu_set(this->deltas_.count(), Dtype(0), this->deltas_.mutable_cpu_data());
  this->im_info_.mutable_cpu_data()[1] = 100;
  ExpectRows(this->Rois(OneAnchorParam(0)),
             {{0, 0, 0, 16, 16}, {0, 16, 0, 32, 16}, {0, 32, 0, 48, 16}, {0, 48, 0, 64, 16}});
}

TYPED_TEST(ProposalLayerTest, ScoresAreTheSecondHalfOfTheChannels) {
  using Dtype = typename TypeParam::Dtype;
  // High background scores (channel 0) change nothing.
  for (int i = 0; i < 4; ++i) this->scores_.mutable_cpu_data()[i] = Dtype(10 + i);
  ExpectRows(this->Rois(OneAnchorParam(10)), {{0, 0, 0, 16, 16}, {0, 12, 0, 39, 16}});
}

TYPED_TEST(ProposalLayerTest, AnchorsFollowCellsRowByRow) {
  using Dtype = typename TypeParam::Dtype;
  // Two rows of two cells, two anchors (ratio 1, scales 1 and 2) each; the
  // scores pick (h 1, w 0, anchor 1) first, then (h 0, w 1, anchor 0).
  this->scores_.Reshape(1, 4, 2, 2);
  this->deltas_.Reshape(1, 8, 2, 2);
  cpu_set(this->scores_.count(), Dtype(0), this->scores_.mutable_cpu_data());
  cpu_set(this->deltas_.count(), Dtype(0), this->deltas_.mutable_cpu_data());
  this->scores_.mutable_cpu_data()[(2 + 1) * 4 + 2] = Dtype(0.9);
  this->scores_.mutable_cpu_data()[(2 + 0) * 4 + 1] = Dtype(0.8);
  this->im_info_.mutable_cpu_data()[0] = 100;
  this->im_info_.mutable_cpu_data()[1] = 100;
  LayerParameter param = OneAnchorParam(0);
  param.mutable_proposal_param()->add_scale(2);
  param.mutable_proposal_param()->set_post_nms_topn(2);
  // Scale 2: [-8, -8, 23, 23] shifted by (0, 16), decoded one pixel wider.
  ExpectRows(this->Rois(param), {{0, 0, 8, 24, 40}, {0, 16, 0, 32, 16}});
}

TYPED_TEST(ProposalLayerTest, NoBoxLeft) {
  LayerParameter param = OneAnchorParam(1000);
  EXPECT_TRUE(this->Rois(param).empty());
  EXPECT_EQ(this->rois_.shape(), (std::vector<int>{0, 5}));
}

TYPED_TEST(ProposalLayerTest, BadParametersRefused) {
  using Dtype = typename TypeParam::Dtype;
  std::vector<LayerParameter> bad(9, OneAnchorParam(10));
  bad[0].mutable_proposal_param()->set_feat_stride(0);
  bad[1].mutable_proposal_param()->set_base_size(0);
  bad[2].mutable_proposal_param()->set_nms_thresh(1.5);
  bad[3].mutable_proposal_param()->set_nms_thresh(-0.1);
  bad[4].mutable_proposal_param()->set_nms_thresh(std::numeric_limits<float>::quiet_NaN());
  bad[5].mutable_proposal_param()->set_ratio(0, 0);
  bad[6].mutable_proposal_param()->set_scale(0, -1);
  bad[7].mutable_proposal_param()->set_scale(0, std::numeric_limits<float>::infinity());
  bad[8].mutable_proposal_param()->set_ratio(0, 1e-12f);  // an anchor of no height
  Blob<Dtype> rois;
  std::vector<Blob<Dtype>*> tops{&rois};
  for (const LayerParameter& param : bad) {
    ProposalLayer<Dtype> layer(param);
    ExpectSetUpThrowsNamingLayer<Dtype>(&layer, this->Bottoms(), tops);
  }
}

TYPED_TEST(ProposalLayerTest, BadShapesRefused) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> rois;
  std::vector<Blob<Dtype>*> tops{&rois};
  const LayerParameter param = OneAnchorParam(10);
  {
    this->scores_.Reshape(2, 2, 1, 4);
    this->deltas_.Reshape(2, 4, 1, 4);
    ProposalLayer<Dtype> layer(param);
    ExpectSetUpError<Dtype>(&layer, this->Bottoms(), tops, "one image at a time");
  }
  {
    this->scores_.Reshape(1, 4, 1, 4);
    this->deltas_.Reshape(1, 4, 1, 4);
    ProposalLayer<Dtype> layer(param);
    ExpectSetUpError<Dtype>(&layer, this->Bottoms(), tops, "1 anchors need 2");
  }
  {
    this->scores_.Reshape(1, 2, 1, 4);
    this->deltas_.Reshape(1, 8, 1, 4);
    ProposalLayer<Dtype> layer(param);
    ExpectSetUpError<Dtype>(&layer, this->Bottoms(), tops, "1 anchors need 4");
  }
  {
    this->deltas_.Reshape(1, 4, 1, 3);
    ProposalLayer<Dtype> layer(param);
    ExpectSetUpError<Dtype>(&layer, this->Bottoms(), tops, "same height and width");
  }
  {
    this->deltas_.Reshape(1, 4, 1, 4);
    this->im_info_.Reshape(std::vector<int>{1, 2});
    ProposalLayer<Dtype> layer(param);
    ExpectSetUpError<Dtype>(&layer, this->Bottoms(), tops, "im_info");
  }
}

TYPED_TEST(ProposalLayerTest, BadInputsRefused) {
  using Dtype = typename TypeParam::Dtype;
  const Dtype nan = std::numeric_limits<Dtype>::quiet_NaN();
  for (const std::vector<double>& info :
       {std::vector<double>{0, 40, 1}, {20, -1, 1}, {20, 40, 0}, {20, 40, double(nan)}}) {
    SetValues(&this->im_info_, info);
    const std::string message = ErrorMessageOf([&] { this->Rois(OneAnchorParam(10)); });
    EXPECT_NE(message.find("'proposal' (Proposal)"), std::string::npos) << message;
    EXPECT_NE(message.find("im_info"), std::string::npos) << message;
  }
  SetValues(&this->im_info_, {20, 40, 1});
  this->scores_.mutable_cpu_data()[4 + 2] = nan;
  const std::string message = ErrorMessageOf([&] { this->Rois(OneAnchorParam(10)); });
  EXPECT_NE(message.find("'proposal' (Proposal)"), std::string::npos) << message;
  EXPECT_NE(message.find("anchor 0 at cell (0, 2) is not a number"), std::string::npos) << message;
}

TYPED_TEST(ProposalLayerTest, PythonLayerBuiltAsProposal) {
  using Dtype = typename TypeParam::Dtype;
  const LayerParameter python =
      PythonProposalParam("{'feat_stride': 16, 'scales': (1,), 'ratios': [1.0]}");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(python)->type(), "Proposal");
  // The Python layer takes py-faster-rcnn's TEST values: min_size 16 drops
  // cell 2 as min_size 10 does.
  const std::vector<std::vector<Dtype>> from_python = this->Rois(python);
  EXPECT_EQ(from_python, this->Rois(OneAnchorParam(16)));
  EXPECT_EQ(from_python.size(), 2u);
}

TYPED_TEST(ProposalLayerTest, PythonLayerInANet) {
  using Dtype = typename TypeParam::Dtype;
  const NetParameter param = ParseNet(R"(
    name: "rpn"
    layer { name: "input" type: "Input" top: "cls" top: "bbox" top: "im_info"
      input_param { shape { dim: 1 dim: 18 dim: 3 dim: 4 } shape { dim: 1 dim: 36 dim: 3 dim: 4 }
                    shape { dim: 1 dim: 3 } } }
    layer { name: "proposal" type: "Python" bottom: "cls" bottom: "bbox" bottom: "im_info"
      top: "rois" python_param { module: "rpn.proposal_layer" layer: "ProposalLayer"
                                 param_str: "'feat_stride': 16" } })");
  Net<Dtype> net(param);
  SetValues(net.blob_by_name("im_info").get(), {48, 64, 1});
  FillGaussian(net.blob_by_name("cls").get());
  net.Forward();
  EXPECT_STREQ(net.layer_by_name("proposal")->type(), "Proposal");
  EXPECT_GT(net.blob_by_name("rois")->shape(0), 0);
}

TEST(ProposalParamStrTest, ReadsPyFasterRcnnForms) {
  EXPECT_EQ(ProposalParameterFromParamStr("'feat_stride': 16").feat_stride(), 16u);
  EXPECT_EQ(ProposalParameterFromParamStr("feat_stride: 8").feat_stride(), 8u);
  const ProposalParameter yaml =
      ProposalParameterFromParamStr("'feat_stride': 16\n'scales': !!python/tuple [4, 8, 16, 32]");
  EXPECT_EQ(yaml.scale_size(), 4);
  EXPECT_EQ(yaml.scale(3), 32);
  const ProposalParameter dict = ProposalParameterFromParamStr(
      " {\"feat_stride\": 16, \"scales\": (2, 4.5), 'ratios': [0.5, 1, 2,],} ");
  EXPECT_EQ(dict.scale_size(), 2);
  EXPECT_EQ(dict.scale(1), 4.5f);
  EXPECT_EQ(dict.ratio_size(), 3);
  EXPECT_EQ(dict.ratio(0), 0.5f);
  // The rest keep py-faster-rcnn's TEST values.
  EXPECT_EQ(dict.min_size(), 16u);
  EXPECT_EQ(dict.pre_nms_topn(), 6000u);
  EXPECT_EQ(dict.post_nms_topn(), 300u);
  EXPECT_FLOAT_EQ(dict.nms_thresh(), 0.7f);
}

TEST(ProposalParamStrTest, RefusesWhatItCannotRead) {
  for (const std::string& text :
       {std::string("'feat_stride': 16, 'foo': 1"), std::string("'feat_stride': 'x'"),
        std::string(""), std::string("'scales': [8, 16]"), std::string("'feat_stride': 16.5"),
        std::string("'feat_stride': 16, 'feat_stride': 8"), std::string("{'feat_stride': 16"),
        std::string("'feat_stride': 16, 'scales': [8 16]"), std::string("'feat_stride': 16 x"),
        std::string("'feat_stride': 16, 'scales': []")}) {
    const std::string message =
        ErrorMessageOf([&] { LayerRegistry<float>::CreateLayer(PythonProposalParam(text)); });
    EXPECT_NE(message.find("layer 'proposal' (Python rpn.proposal_layer.ProposalLayer"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("param_str \"" + text + "\""), std::string::npos) << message;
  }
  const std::string unknown =
      ErrorMessageOf([] { ProposalParameterFromParamStr("'feat_stride': 16, 'foo': 1"); });
  EXPECT_NE(unknown.find("not 'foo'"), std::string::npos) << unknown;
}

TEST(ProposalParamStrTest, OtherPythonLayersAreNotStoodIn) {
  PythonParameter other;
  other.set_module("rpn.proposal_layer");
  other.set_layer("SomethingElse");
  EXPECT_EQ(PythonStandIns::Find(other), nullptr);
  other.set_module("roi_data_layer.layer");
  other.set_layer("ProposalLayer");
  EXPECT_EQ(PythonStandIns::Find(other), nullptr);
}

TYPED_TEST(ProposalLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(OneAnchorParam(16))->type(), "Proposal");
}

}  // namespace
}  // namespace crema
