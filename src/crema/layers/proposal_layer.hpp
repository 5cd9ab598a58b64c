// Proposal (Faster R-CNN): region proposals from a region proposal network,
// the C++ form of py-faster-rcnn's Python layer rpn.proposal_layer at its
// TEST configuration. Bottoms: rpn_cls_prob_reshape [1, 2A, H, W] (channel
// A + a holds anchor a's foreground score), rpn_bbox_pred [1, 4A, H, W]
// (channels 4a .. 4a + 3: dx, dy, dw, dh of anchor a) and im_info [1, 3]
// (image height, width, scale). At each cell (h, w), in (h, w, anchor)
// order, anchor a shifted by (w, h) * feat_stride is moved by its deltas
// (py-faster-rcnn's bbox_transform_inv: widths x2 - x1 + 1, centre
// x1 + width / 2, sizes times exp(dw), exp(dh)), clipped to the image,
// dropped when a side is under min_size * scale; the rest are sorted by
// score (descending, ties in anchor order), cut to pre_nms_topn, thinned by
// non-maximum suppression (IoU of +1 areas above nms_thresh suppresses) and
// cut to post_nms_topn (0: no cut). Top 0: rois [K, 5] (0, x1, y1, x2, y2);
// optional top 1: their scores [K, 1]. No gradient.
//
// py-faster-rcnn's deploy nets declare this layer as type "Python" with
// python_param { module: "rpn.proposal_layer" layer: "ProposalLayer"
// param_str: "'feat_stride': 16" }; such a layer is built as this one
// (a native stand-in, see layer_factory.hpp), with or without Python.
#ifndef CREMA_LAYERS_PROPOSAL_LAYER_HPP_
#define CREMA_LAYERS_PROPOSAL_LAYER_HPP_

#include <array>
#include <string>
#include <vector>

#include "crema/layer.hpp"

namespace crema {

// py-faster-rcnn's generate_anchors: boxes (x1, y1, x2, y2) about the base
// box [0, 0, base_size - 1, base_size - 1]; for each ratio (height / width)
// a box of about the base area with width round(sqrt(area / ratio)) and
// height round(width * ratio) (halves to even, as numpy rounds), then for
// each scale that box scaled about its centre. Ratio-major order.
std::vector<std::array<double, 4>> GenerateAnchors(int base_size, const std::vector<float>& ratios,
                                                   const std::vector<float>& scales);

// The ProposalParameter that a py-faster-rcnn param_str describes: a Python
// dict literal or YAML mapping ("'feat_stride': 16", "{'feat_stride': 16,
// 'scales': (8, 16, 32)}", "'scales': !!python/tuple [4, 8]") with keys
// feat_stride, scales and ratios. Throws an Error naming the text on
// anything else.
ProposalParameter ProposalParameterFromParamStr(const std::string& param_str);

template <typename Dtype>
class ProposalLayer : public Layer<Dtype> {
 public:
  explicit ProposalLayer(const LayerParameter& param) : Layer<Dtype>(param) {}
  void LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                  const std::vector<Blob<Dtype>*>& top) override;
  void Reshape(const std::vector<Blob<Dtype>*>& bottom,
               const std::vector<Blob<Dtype>*>& top) override;

  const char* type() const override { return "Proposal"; }
  int ExactNumBottomBlobs() const override { return 3; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  bool AllowForceBackward(int bottom_index) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  // Sorting and non-maximum suppression are sequential: the GPU body runs
  // the CPU one.
  void Forward_gpu(const std::vector<Blob<Dtype>*>& bottom,
                   const std::vector<Blob<Dtype>*>& top) override;
  // No gradient: the proposals are not differentiable in the scores or deltas.
  void Backward_cpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;
  void Backward_gpu(const std::vector<Blob<Dtype>*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob<Dtype>*>& bottom) override;

 private:
  // A candidate box and its score.
  struct Box {
    Dtype x1, y1, x2, y2;
    Dtype score;
  };
  // The image's height, width and scale from im_info, checked.
  struct ImageInfo {
    Dtype height, width, scale;
  };
  ImageInfo ReadImageInfo(const Blob<Dtype>& im_info) const;
  // Every anchor at every cell moved by its deltas and clipped, in
  // (h, w, anchor) order, less those under the minimum size.
  std::vector<Box> DecodeBoxes(const Blob<Dtype>& scores, const Blob<Dtype>& deltas,
                               const ImageInfo& image) const;
  // The boxes by score, descending (ties keep their order), at most
  // pre_nms_topn of them.
  std::vector<Box> TopScoring(std::vector<Box> boxes) const;
  // Greedy non-maximum suppression of boxes sorted by score; at most
  // post_nms_topn kept.
  std::vector<Box> Suppress(const std::vector<Box>& boxes) const;
  void WriteTops(const std::vector<Box>& boxes, const std::vector<Blob<Dtype>*>& top) const;

  int feat_stride_ = 0;
  int min_size_ = 0;
  int pre_nms_topn_ = 0;
  int post_nms_topn_ = 0;
  Dtype nms_thresh_ = 0;
  std::vector<std::array<double, 4>> anchors_;
};

}  // namespace crema

#endif  // CREMA_LAYERS_PROPOSAL_LAYER_HPP_
