#include "crema/layers/proposal_layer.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "crema/layers/python_stand_ins.hpp"

namespace crema {

namespace {

// numpy's round: halves go to the even neighbour.
double RoundHalfToEven(double x) {
  const double rounded = std::round(x);
  return std::fabs(rounded - x) == 0.5 ? 2.0 * std::round(x / 2.0) : rounded;
}

// The box of width w and height h about (x_centre, y_centre), ends inclusive
// (py-faster-rcnn's _mkanchors).
std::array<double, 4> BoxAbout(double x_centre, double y_centre, double w, double h) {
  return {x_centre - 0.5 * (w - 1), y_centre - 0.5 * (h - 1), x_centre + 0.5 * (w - 1),
          y_centre + 0.5 * (h - 1)};
}

// Anchor sides beyond this are refused: no image is that large.
constexpr double kMaxAnchorSide = 1 << 24;
// More anchors per cell than this are refused.
constexpr int kMaxAnchors = 1 << 12;

// Reads py-faster-rcnn's param_str: a Python dict literal or YAML mapping
// whose keys are names (quoted or bare) and whose values are numbers or lists
// of numbers ([...], (...), or YAML's "!!python/tuple [...]"). Entries are
// separated by commas or line breaks; the braces are optional.
class ParamStrReader {
 public:
  explicit ParamStrReader(const std::string& text) : text_(text) {}

  ProposalParameter Read() {
    ProposalParameter param;
    SkipSpaces();
    const bool braced = Take('{');
    std::vector<std::string> seen;
    while (SkipSpaces(), pos_ < text_.size() && text_[pos_] != '}') {
      const std::string key = ReadKey();
      Require(std::find(seen.begin(), seen.end(), key) == seen.end(),
              "each key once ('" + key + "' comes again)");
      seen.push_back(key);
      SkipSpaces();
      Require(Take(':'), "':' after key '" + key + "'");
      Assign(key, &param);
      SkipSpaces();
      Take(',');
    }
    if (braced) Require(Take('}'), "the closing '}'");
    SkipSpaces();
    Require(pos_ == text_.size(), "the end of the text");
    Require(param.has_feat_stride(), "the key 'feat_stride'");
    return param;
  }

 private:
  void Assign(const std::string& key, ProposalParameter* param) {
    if (key == "feat_stride") {
      const double stride = ReadNumber();
      Require(stride == std::floor(stride) && stride >= 1 && stride <= kMaxAnchorSide,
              "a positive whole feat_stride");
      param->set_feat_stride(static_cast<uint32_t>(stride));
    } else if (key == "scales") {
      for (double value : ReadList()) param->add_scale(static_cast<float>(value));
    } else if (key == "ratios") {
      for (double value : ReadList()) param->add_ratio(static_cast<float>(value));
    } else {
      Fail("a key of feat_stride, scales or ratios, not '" + key + "'");
    }
  }

  std::string ReadKey() {
    const char quote = text_[pos_];
    if (quote == '\'' || quote == '"') {
      const size_t end = text_.find(quote, pos_ + 1);
      Require(end != std::string::npos, "a closing quote");
      std::string key = text_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return key;
    }
    const size_t begin = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    Require(pos_ > begin, "a key");
    return text_.substr(begin, pos_ - begin);
  }

  double ReadNumber() {
    SkipSpaces();
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    Require(end != begin && std::isfinite(value), "a number");
    pos_ += end - begin;
    return value;
  }

  std::vector<double> ReadList() {
    SkipSpaces();
    const std::string tag = "!!python/tuple";
    if (text_.compare(pos_, tag.size(), tag) == 0) pos_ += tag.size();
    SkipSpaces();
    const char close = Take('[') ? ']' : Take('(') ? ')' : '\0';
    Require(close != '\0', "a list of numbers in [...] or (...)");
    std::vector<double> values;
    while (SkipSpaces(), !Take(close)) {
      values.push_back(ReadNumber());
      SkipSpaces();
      if (!Take(',')) {
        Require(Take(close), std::string("',' or '") + close + "'");
        break;
      }
    }
    Require(!values.empty(), "at least one number in the list");
    return values;
  }

  void SkipSpaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Take(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void Require(bool condition, const std::string& expected) {
    if (!condition) Fail(expected);
  }
  void Fail(const std::string& expected) {
    CREMA_FAIL("cannot read param_str \"" << text_ << "\": expected " << expected
                                          << " at character " << pos_);
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// py-faster-rcnn's Python layer as the native one: the same name, bottoms and
// tops, its param_str as proposal_param (the other fields keep their TEST
// defaults).
LayerParameter ProposalFromPythonLayer(const LayerParameter& python) {
  LayerParameter native = python;
  native.set_type("Proposal");
  native.clear_python_param();
  try {
    *native.mutable_proposal_param() =
        ProposalParameterFromParamStr(python.python_param().param_str());
  } catch (const Error& error) {
    CREMA_FAIL("layer '" << python.name() << "' (Python " << python.python_param().module() << "."
                         << python.python_param().layer()
                         << ", built as Proposal): " << error.what());
  }
  return native;
}

}  // namespace

ProposalParameter ProposalParameterFromParamStr(const std::string& param_str) {
  return ParamStrReader(param_str).Read();
}

REGISTER_PYTHON_STAND_IN(rpn_proposal_layer, "rpn.proposal_layer", "ProposalLayer",
                         ProposalFromPythonLayer);

std::vector<std::array<double, 4>> GenerateAnchors(int base_size, const std::vector<float>& ratios,
                                                   const std::vector<float>& scales) {
  const double centre = 0.5 * (base_size - 1);
  const double area = double(base_size) * base_size;
  std::vector<std::array<double, 4>> anchors;
  for (const float ratio : ratios) {
    const double width = RoundHalfToEven(std::sqrt(area / ratio));
    const double height = RoundHalfToEven(width * ratio);
    for (const float scale : scales) {
      anchors.push_back(BoxAbout(centre, centre, width * scale, height * scale));
    }
  }
  return anchors;
}

template <typename Dtype>
void ProposalLayer<Dtype>::LayerSetUp(const std::vector<Blob<Dtype>*>& bottom,
                                      const std::vector<Blob<Dtype>*>& top) {
  const ProposalParameter& param = this->layer_param_.proposal_param();
  CREMA_LAYER_REQUIRE(
      param.feat_stride() > 0 && param.feat_stride() <= kMaxAnchorSide,
      "feat_stride must be in [1, " << kMaxAnchorSide << "], got " << param.feat_stride());
  CREMA_LAYER_REQUIRE(
      param.base_size() > 0 && param.base_size() <= kMaxAnchorSide,
      "base_size must be in [1, " << kMaxAnchorSide << "], got " << param.base_size());
  CREMA_LAYER_REQUIRE(
      std::isfinite(param.nms_thresh()) && param.nms_thresh() >= 0 && param.nms_thresh() <= 1,
      "nms_thresh must be in [0, 1], got " << param.nms_thresh());
  // py-faster-rcnn's generate_anchors defaults.
  std::vector<float> ratios(param.ratio().begin(), param.ratio().end());
  std::vector<float> scales(param.scale().begin(), param.scale().end());
  if (ratios.empty()) ratios = {0.5f, 1.0f, 2.0f};
  if (scales.empty()) scales = {8.0f, 16.0f, 32.0f};
  for (const float value : ratios) {
    CREMA_LAYER_REQUIRE(std::isfinite(value) && value > 0,
                        "every ratio must be positive and finite, got " << value);
  }
  for (const float value : scales) {
    CREMA_LAYER_REQUIRE(std::isfinite(value) && value > 0,
                        "every scale must be positive and finite, got " << value);
  }
  CREMA_LAYER_REQUIRE(ratios.size() * scales.size() <= kMaxAnchors,
                      ratios.size() << " ratios x " << scales.size() << " scales make more than "
                                    << kMaxAnchors << " anchors");
  anchors_ = GenerateAnchors(static_cast<int>(param.base_size()), ratios, scales);
  for (const auto& anchor : anchors_) {
    const double width = anchor[2] - anchor[0] + 1, height = anchor[3] - anchor[1] + 1;
    CREMA_LAYER_REQUIRE(
        width >= 1 && height >= 1 && width <= kMaxAnchorSide && height <= kMaxAnchorSide,
        "the ratios and scales make an anchor of " << width << " x " << height
                                                   << " pixels; each side must "
                                                      "be in [1, "
                                                   << kMaxAnchorSide << "]");
  }
  feat_stride_ = static_cast<int>(param.feat_stride());
  min_size_ = static_cast<int>(std::min<uint32_t>(param.min_size(), INT_MAX));
  pre_nms_topn_ = static_cast<int>(std::min<uint32_t>(param.pre_nms_topn(), INT_MAX));
  post_nms_topn_ = static_cast<int>(std::min<uint32_t>(param.post_nms_topn(), INT_MAX));
  nms_thresh_ = param.nms_thresh();
}

template <typename Dtype>
void ProposalLayer<Dtype>::Reshape(const std::vector<Blob<Dtype>*>& bottom,
                                   const std::vector<Blob<Dtype>*>& top) {
  const Blob<Dtype>& scores = *bottom[0];
  const Blob<Dtype>& deltas = *bottom[1];
  const Blob<Dtype>& im_info = *bottom[2];
  const int num_anchors = static_cast<int>(anchors_.size());
  CREMA_LAYER_REQUIRE(scores.num_axes() == 4 && deltas.num_axes() == 4,
                      "bottom[0] (scores) and bottom[1] (deltas) must be [1, C, H, W], got "
                          << scores.shape_string() << " and " << deltas.shape_string());
  CREMA_LAYER_REQUIRE(scores.num() == 1 && deltas.num() == 1,
                      "takes one image at a time (as py-faster-rcnn does), got batches of "
                          << scores.num() << " and " << deltas.num());
  CREMA_LAYER_REQUIRE(scores.channels() == 2 * num_anchors,
                      "bottom[0] (scores) has " << scores.channels() << " channels; " << num_anchors
                                                << " anchors need " << 2 * num_anchors);
  CREMA_LAYER_REQUIRE(deltas.channels() == 4 * num_anchors,
                      "bottom[1] (deltas) has " << deltas.channels() << " channels; " << num_anchors
                                                << " anchors need " << 4 * num_anchors);
  CREMA_LAYER_REQUIRE(deltas.height() == scores.height() && deltas.width() == scores.width(),
                      "bottom[0] (scores) " << scores.shape_string() << " and bottom[1] (deltas) "
                                            << deltas.shape_string()
                                            << " must have the same height and width");
  CREMA_LAYER_REQUIRE(
      im_info.num_axes() >= 2 && im_info.shape(0) == 1 && im_info.count() == 3,
      "bottom[2] (im_info) must be [1, 3] (height, width, scale), got " << im_info.shape_string());
  // py-faster-rcnn's shapes before the first forward; Forward sets the count.
  top[0]->Reshape(std::vector<int>{1, 5});
  if (top.size() > 1) top[1]->Reshape(std::vector<int>{1, 1});
}

template <typename Dtype>
typename ProposalLayer<Dtype>::ImageInfo ProposalLayer<Dtype>::ReadImageInfo(
    const Blob<Dtype>& im_info) const {
  const Dtype* values = im_info.cpu_data();
  for (int i = 0; i < 3; ++i) {
    CREMA_LAYER_REQUIRE(std::isfinite(values[i]) && values[i] > 0,
                        "im_info must hold a positive height, width and scale, got "
                            << values[0] << ", " << values[1] << ", " << values[2]);
  }
  return ImageInfo{values[0], values[1], values[2]};
}

template <typename Dtype>
std::vector<typename ProposalLayer<Dtype>::Box> ProposalLayer<Dtype>::DecodeBoxes(
    const Blob<Dtype>& scores, const Blob<Dtype>& deltas, const ImageInfo& image) const {
  const int height = scores.height(), width = scores.width();
  const int plane = height * width;
  const int num_anchors = static_cast<int>(anchors_.size());
  const Dtype min_side = Dtype(min_size_) * image.scale;
  std::vector<Box> boxes;
  boxes.reserve(static_cast<size_t>(plane) * num_anchors);
  for (int h = 0; h < height; ++h) {
    for (int w = 0; w < width; ++w) {
      const int cell = h * width + w;
      for (int a = 0; a < num_anchors; ++a) {
        const Dtype score = scores.cpu_data()[(num_anchors + a) * plane + cell];
        CREMA_LAYER_REQUIRE(!std::isnan(score), "the score of anchor " << a << " at cell (" << h
                                                                       << ", " << w
                                                                       << ") is not a number");
        // The anchor shifted to the cell, in Dtype (as py-faster-rcnn casts
        // the anchors to the deltas' type).
        const std::array<double, 4>& anchor = anchors_[a];
        const double shift_x = double(w) * feat_stride_, shift_y = double(h) * feat_stride_;
        const Dtype x1 = Dtype(anchor[0] + shift_x), y1 = Dtype(anchor[1] + shift_y);
        const Dtype x2 = Dtype(anchor[2] + shift_x), y2 = Dtype(anchor[3] + shift_y);
        const Dtype box_w = x2 - x1 + Dtype(1), box_h = y2 - y1 + Dtype(1);
        const Dtype centre_x = x1 + Dtype(0.5) * box_w, centre_y = y1 + Dtype(0.5) * box_h;
        const Dtype* delta = deltas.cpu_data() + 4 * a * plane + cell;
        const Dtype new_centre_x = delta[0] * box_w + centre_x;
        const Dtype new_centre_y = delta[plane] * box_h + centre_y;
        const Dtype new_w = std::exp(delta[2 * plane]) * box_w;
        const Dtype new_h = std::exp(delta[3 * plane]) * box_h;
        // Clipped to [0, width - 1] x [0, height - 1]; NaN stays NaN and is
        // dropped by the size test below, as numpy drops it.
        auto clip = [](Dtype value, Dtype high) {
          return std::max(std::min(value, high), Dtype(0));
        };
        Box box;
        box.x1 = clip(new_centre_x - Dtype(0.5) * new_w, image.width - Dtype(1));
        box.y1 = clip(new_centre_y - Dtype(0.5) * new_h, image.height - Dtype(1));
        box.x2 = clip(new_centre_x + Dtype(0.5) * new_w, image.width - Dtype(1));
        box.y2 = clip(new_centre_y + Dtype(0.5) * new_h, image.height - Dtype(1));
        box.score = score;
        const bool big_enough =
            box.x2 - box.x1 + Dtype(1) >= min_side && box.y2 - box.y1 + Dtype(1) >= min_side;
        if (big_enough) boxes.push_back(box);
      }
    }
  }
  return boxes;
}

template <typename Dtype>
std::vector<typename ProposalLayer<Dtype>::Box> ProposalLayer<Dtype>::TopScoring(
    std::vector<Box> boxes) const {
  std::stable_sort(boxes.begin(), boxes.end(),
                   [](const Box& a, const Box& b) { return a.score > b.score; });
  if (pre_nms_topn_ > 0 && boxes.size() > static_cast<size_t>(pre_nms_topn_)) {
    boxes.resize(pre_nms_topn_);
  }
  return boxes;
}

template <typename Dtype>
std::vector<typename ProposalLayer<Dtype>::Box> ProposalLayer<Dtype>::Suppress(
    const std::vector<Box>& boxes) const {
  // py-faster-rcnn's nms: areas and intersections count both ends (+1); a
  // box goes when its IoU with a kept, higher-scoring box exceeds nms_thresh.
  auto area = [](const Box& b) { return (b.x2 - b.x1 + Dtype(1)) * (b.y2 - b.y1 + Dtype(1)); };
  std::vector<bool> suppressed(boxes.size(), false);
  std::vector<Box> kept;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (suppressed[i]) continue;
    const Box& best = boxes[i];
    kept.push_back(best);
    if (post_nms_topn_ > 0 && kept.size() == static_cast<size_t>(post_nms_topn_)) break;
    const Dtype best_area = area(best);
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      if (suppressed[j]) continue;
      const Box& other = boxes[j];
      const Dtype overlap_w =
          std::max(Dtype(0), std::min(best.x2, other.x2) - std::max(best.x1, other.x1) + Dtype(1));
      const Dtype overlap_h =
          std::max(Dtype(0), std::min(best.y2, other.y2) - std::max(best.y1, other.y1) + Dtype(1));
      const Dtype overlap = overlap_w * overlap_h;
      const Dtype iou = overlap / (best_area + area(other) - overlap);
      if (iou > nms_thresh_) suppressed[j] = true;
    }
  }
  return kept;
}

template <typename Dtype>
void ProposalLayer<Dtype>::WriteTops(const std::vector<Box>& boxes,
                                     const std::vector<Blob<Dtype>*>& top) const {
  const int count = static_cast<int>(boxes.size());
  top[0]->Reshape(std::vector<int>{count, 5});
  Dtype* rois = top[0]->mutable_cpu_data();
  for (const Box& box : boxes) {
    *rois++ = 0;  // the image index: one image per batch
    *rois++ = box.x1;
    *rois++ = box.y1;
    *rois++ = box.x2;
    *rois++ = box.y2;
  }
  if (top.size() < 2) return;
  top[1]->Reshape(std::vector<int>{count, 1});
  Dtype* scores = top[1]->mutable_cpu_data();
  for (const Box& box : boxes) *scores++ = box.score;
}

template <typename Dtype>
void ProposalLayer<Dtype>::Forward_cpu(const std::vector<Blob<Dtype>*>& bottom,
                                       const std::vector<Blob<Dtype>*>& top) {
  const ImageInfo image = ReadImageInfo(*bottom[2]);
  WriteTops(Suppress(TopScoring(DecodeBoxes(*bottom[0], *bottom[1], image))), top);
}

template <typename Dtype>
void ProposalLayer<Dtype>::Backward_cpu(const std::vector<Blob<Dtype>*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob<Dtype>*>& bottom) {}

#ifndef CREMA_CUDA
STUB_GPU(ProposalLayer);
#endif

INSTANTIATE_CLASS(ProposalLayer);
REGISTER_LAYER_CLASS(Proposal);

}  // namespace crema
