#include "crema/dnnl/dnnl_folded_conv_layer.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_twin_impl.hpp"
#include "crema/dnnl/folded_output.hpp"

namespace crema {

struct DnnlFoldedPrimitives {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::algorithm algorithm;
  ConvolutionWindows windows;
  dnnl::convolution_forward forward;
  // The pointwise producer's convolution and this one in one primitive
  // (FusePointwise), where made; the source it reads.
  dnnl::convolution_forward fused;
  dnnl::memory::desc fused_src;
  dnnl::memory::desc src_plain, dst_plain, weights_plain;
  // The buffers in the layouts the primitive chose (src empty where its
  // layout is the plain one; the output's are FoldedOutput's).
  dnnl::memory src, weights, bias;
  dnnl::reorder src_in, pack;
  std::vector<float> folded_weights;  // plain, before packing
};

template <template <typename> class Reference>
DnnlFoldedConvolution<Reference>::DnnlFoldedConvolution(const LayerParameter& param,
                                                        const ConvolutionFolds& folds)
    : DnnlFoldedTwin<Reference, DnnlFoldedPrimitives>(param), folds_(folds) {}

// One inference primitive, in the activation layouts chosen below.
template <template <typename> class Reference>
bool DnnlFoldedConvolution<Reference>::MakePrimitives(const std::vector<Blob<float>*>& bottom,
                                                      const std::vector<Blob<float>*>& top,
                                                      DnnlFoldedPrimitives* p) {
  packed_from_ = FoldSources();
  if (pointwise_) pointwise_->LeaveOutputToReader(false);  // until the fused primitive is made
  this->SetUpOutput(dnnl::memory::desc(), dnnl::memory::desc());  // none until made
  if (this->num_spatial_axes_ != 2 || this->channel_axis_ != 1 || bottom[0]->num_axes() != 4 ||
      bottom.size() != 1) {
    return false;
  }
  const int group = this->group_, out = this->num_output_, in = this->channels_;
  const int kh = this->kernel_shape_[0], kw = this->kernel_shape_[1];
  p->src_plain = PlainDesc(bottom[0]->shape());
  p->dst_plain = PlainDesc(top[0]->shape());
  p->weights_plain = group == 1 ? PlainDesc({out, in, kh, kw})
                                : PlainDesc({group, out / group, in / group, kh, kw});
  const auto any = [](const dnnl::memory::desc& plain) {
    return dnnl::memory::desc(plain.dims(), dnnl::memory::data_type::f32,
                              dnnl::memory::format_tag::any);
  };
  const ConvolutionWindows w =
      WindowsOf(this->kernel_shape_, this->stride_, this->pad_, this->dilation_,
                this->input_spatial_shape_, this->output_spatial_shape_);
  dnnl::primitive_attr attributes;
  attributes.set_post_ops(folds_.activation.PostOps());
  const dnnl::memory::desc bias_desc = PlainDesc({out});
  const auto make = [&](dnnl::algorithm algorithm, const dnnl::memory::desc& src,
                        const dnnl::memory::desc& dst) {
    return dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src,
                                        any(p->weights_plain), bias_desc, dst, w.strides, w.dilates,
                                        w.pad_left, w.pad_right),
        attributes, DnnlEngine());
  };
  // The algorithms to try: Winograd first where the layer asks for it
  // (convolution_algorithm: WINOGRAD, opt-in: it changes the rounding) and
  // it pays (FoldedWinogradPays), then direct. For each, the layouts to try, in order; the first
  // that oneDNN runs with an optimised kernel (not its reference one) is kept:
  // 1. the input as the producer's output lies (no move at all), the output
  //    as in 2;
  // 2. PreferredActivation for the input, PreferredOutput for the output:
  //    oneDNN's direct kernels on channel blocks, faster on MobileNet and
  //    the SSD nets than the channels-last ones it picks by itself;
  // 3. oneDNN's own choice, the input plain below a block's channels.
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory::desc>> layouts;
  const dnnl::memory::desc dst = PreferredOutput(p->dst_plain);
  const dnnl::memory::desc* produced = producer_ ? producer_->BlockedOutputDesc() : nullptr;
  if (produced && produced->dims() == p->src_plain.dims()) layouts.emplace_back(*produced, dst);
  if (DnnlActivationBlocks().width != 0) {
    layouts.emplace_back(PreferredActivation(p->src_plain), dst);
  }
  std::vector<dnnl::algorithm> algorithms{dnnl::algorithm::convolution_direct};
  if (WinogradPays()) algorithms.insert(algorithms.begin(), dnnl::algorithm::convolution_winograd);
  dnnl::convolution_forward::primitive_desc pd;
  bool made = false;
  p->algorithm = dnnl::algorithm::convolution_direct;
  for (size_t a = 0; a < algorithms.size() && !made; ++a) {
    for (size_t l = 0; l < layouts.size() && !made; ++l) {
      try {
        pd = make(algorithms[a], layouts[l].first, layouts[l].second);
        made = OptimisedKernel(pd);
        if (made) p->algorithm = algorithms[a];
      } catch (const dnnl::error&) {
      }
    }
  }
  if (!made) {
    pd = make(dnnl::algorithm::convolution_direct, in < 16 ? p->src_plain : any(p->src_plain),
              any(p->dst_plain));
  }
  p->pd = pd;
  p->windows = w;
  p->forward = dnnl::convolution_forward(pd);
  if (pd.src_desc() != p->src_plain) {
    p->src = dnnl::memory(pd.src_desc(), DnnlEngine());
    p->src_in = dnnl::reorder(
        dnnl::reorder::primitive_desc(DnnlEngine(), p->src_plain, DnnlEngine(), pd.src_desc()));
  }
  // A pass that reads its own copy or a producer's blocks can run again.
  this->SetUpOutput(pd.dst_desc(), p->dst_plain, /*restorable=*/static_cast<bool>(p->src));
  p->weights = dnnl::memory(pd.weights_desc(), DnnlEngine());
  p->folded_weights.resize(this->blobs_[0]->count());
  p->pack = dnnl::reorder(Wrap(p->weights_plain, p->folded_weights.data()), p->weights);
  p->bias = dnnl::memory(bias_desc, DnnlEngine());
  if (pointwise_) pointwise_->LeaveOutputToReader(MakeFused(pd, p));
  return true;
}

template <template <typename> class Reference>
void DnnlFoldedConvolution<Reference>::FusePointwise(
    DnnlFoldedConvolution<ConvolutionLayer>* pointwise) {
  pointwise_ = pointwise;
  producer_ = pointwise;
}

template <template <typename> class Reference>
std::optional<dnnl::convolution_forward::primitive_desc>
DnnlFoldedConvolution<Reference>::FusedWith(const std::function<void(dnnl::post_ops*)>& append,
                                            bool parts) const {
  if (!this->ready() || !this->primitives_->src || !this->OutputBlocked()) return std::nullopt;
  const DnnlFoldedPrimitives& p = *this->primitives_;
  dnnl::post_ops ops;
  folds_.activation.AppendTo(&ops);
  append(&ops);
  dnnl::primitive_attr attributes;
  attributes.set_post_ops(ops);
  const ConvolutionWindows& w = p.windows;
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference, p.algorithm, p.pd.src_desc(), p.pd.weights_desc(),
            p.pd.bias_desc(), p.pd.dst_desc(), w.strides, w.dilates, w.pad_left, w.pad_right),
        attributes, DnnlEngine());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  if (!(OptimisedKernel(pd) || (parts && OptimisedParts(pd))) ||
      pd.weights_desc() != p.pd.weights_desc()) {
    return std::nullopt;
  }
  return pd;
}

// oneDNN's depthwise post-op: the pointwise convolution (1x1, stride 1, one
// group; oneDNN has no fused kernel for others) with its activation, then
// this 3x3 depthwise one of stride 1 or 2 and padding 1 on its output, then
// this layer's activation. Made where oneDNN runs it in one optimised
// kernel, or in its stand-in of two optimised kernels in turn
// (OptimisedParts: for the pairs whose pointwise output fits the threads'
// caches, where oneDNN has no single kernel). The stand-in's pointwise
// output goes to the primitive's scratchpad, which every pass reuses (still
// in cache when the depthwise kernel reads it), instead of a buffer of its
// own. Reads this layer's packed weights and writes the output its readers
// read.
template <template <typename> class Reference>
bool DnnlFoldedConvolution<Reference>::MakeFused(
    const dnnl::convolution_forward::primitive_desc& own, DnnlFoldedPrimitives* p) {
  const auto all = [](const std::vector<int>& v, int value) {
    return std::all_of(v.begin(), v.end(), [value](int x) { return x == value; });
  };
  const int channels = this->channels_;
  const bool depthwise = this->group_ == channels && this->num_output_ == channels &&
                         all(this->kernel_shape_, 3) && all(this->pad_, 1) &&
                         all(this->dilation_, 1) && this->stride_[0] == this->stride_[1] &&
                         (this->stride_[0] == 1 || this->stride_[0] == 2);
  if (!depthwise || !this->OutputBlocked()) return false;
  const auto f32 = dnnl::memory::data_type::f32;
  const std::optional<dnnl::convolution_forward::primitive_desc> pd = pointwise_->FusedWith(
      [&](dnnl::post_ops* ops) {
        ops->append_dw(f32, f32, f32, 3, this->stride_[0], 1, 0, {});
        folds_.activation.AppendTo(ops);
      },
      /*parts=*/true);
  const int dw = DNNL_ARG_ATTR_POST_OP_DW;
  if (!pd || pd->query_md(dnnl::query::exec_arg_md, dw | DNNL_ARG_WEIGHTS) != own.weights_desc() ||
      pd->query_md(dnnl::query::exec_arg_md, dw | DNNL_ARG_BIAS) != p->bias.get_desc() ||
      pd->dst_desc() != own.dst_desc()) {
    return false;
  }
  p->fused = dnnl::convolution_forward(*pd);
  p->fused_src = pd->src_desc();
  return true;
}

template <template <typename> class Reference>
std::optional<FoldedOutput::Pass> DnnlFoldedConvolution<Reference>::FusedPass(
    const FoldedOutput::Pass* pending, const dnnl::memory& dst) const {
  const DnnlFoldedPrimitives& p = *this->primitives_;
  if (!p.fused || !pending || pending->arguments.at(DNNL_ARG_SRC).get_desc() != p.fused_src) {
    return std::nullopt;
  }
  const int dw = DNNL_ARG_ATTR_POST_OP_DW;
  return FoldedOutput::Pass{p.fused,
                            {{DNNL_ARG_SRC, pending->arguments.at(DNNL_ARG_SRC)},
                             {DNNL_ARG_WEIGHTS, pending->arguments.at(DNNL_ARG_WEIGHTS)},
                             {DNNL_ARG_BIAS, pending->arguments.at(DNNL_ARG_BIAS)},
                             {dw | DNNL_ARG_WEIGHTS, p.weights},
                             {dw | DNNL_ARG_BIAS, p.bias},
                             {DNNL_ARG_DST, dst}}};
}

template <template <typename> class Reference>
bool DnnlFoldedConvolution<Reference>::WinogradPays() const {
  if (this->layer_param_.convolution_algorithm() != WINOGRAD || this->num_spatial_axes_ != 2) {
    return false;
  }
  ConvolutionShape shape;
  shape.kernel_h = this->kernel_shape_[0];
  shape.kernel_w = this->kernel_shape_[1];
  shape.stride_h = this->stride_[0];
  shape.stride_w = this->stride_[1];
  shape.dilation_h = this->dilation_[0];
  shape.dilation_w = this->dilation_[1];
  shape.groups = this->group_;
  shape.input_channels = this->channels_;
  shape.output_channels = this->num_output_;
  shape.output_positions = this->output_spatial_shape_[0] * this->output_spatial_shape_[1];
  return FoldedWinogradPays(shape);
}

// The chain's weights and bias (ChannelFolds::Fold), the weights packed.
template <template <typename> class Reference>
void DnnlFoldedConvolution<Reference>::FoldAndPack(DnnlFoldedPrimitives* p) {
  const int out = this->num_output_;
  folds_.Fold(out, p->folded_weights.size() / out, this->blobs_[0]->cpu_data(),
              this->bias_term_ ? this->blobs_[1]->cpu_data() : nullptr, p->folded_weights.data(),
              static_cast<float*>(p->bias.get_data_handle()));
  DnnlRun(p->pack, {{DNNL_ARG_FROM, Wrap(p->weights_plain, p->folded_weights.data())},
                    {DNNL_ARG_TO, p->weights}});
}

template <template <typename> class Reference>
void DnnlFoldedConvolution<Reference>::Forward_cpu(const std::vector<Blob<float>*>& bottom,
                                                   const std::vector<Blob<float>*>& top) {
  DnnlFoldedPrimitives& p = *this->primitives_;
  // The output first: a pass of this layer left pending still reads the
  // buffers below, and runs here where a memory other than the top's
  // defers to it.
  const dnnl::memory dst = this->OutputFor(top[0]);
  if (!packed_from_.Current(this->blobs_, folds_)) {
    FoldAndPack(&p);
    packed_from_.Record(this->blobs_, folds_);
  }
  if (pointwise_) {
    std::optional<FoldedOutput::Pass> fused = FusedPass(pointwise_->PendingFor(bottom[0]), dst);
    if (fused) {
      this->Run(top[0], std::move(*fused), pointwise_->PendingInput());
      return;
    }
  }
  const FoldedOutput* read = nullptr;
  FoldedOutput::Pass pass{
      p.forward,
      {{DNNL_ARG_SRC, this->Input(producer_, bottom[0], p.src_plain, p.src, p.src_in, &read)},
       {DNNL_ARG_WEIGHTS, p.weights},
       {DNNL_ARG_BIAS, p.bias},
       {DNNL_ARG_DST, dst}}};
  if (leave_output_to_reader_ && p.src) {
    this->WrittenLater(top[0], std::move(pass), read);
    return;
  }
  this->Run(top[0], std::move(pass), read);
}

template class DnnlTwin<float, ConvolutionLayer, DnnlFoldedPrimitives>;
template class DnnlTwin<float, DepthwiseConvolutionLayer, DnnlFoldedPrimitives>;
template class DnnlFoldedConvolution<ConvolutionLayer>;
template class DnnlFoldedConvolution<DepthwiseConvolutionLayer>;

}  // namespace crema
