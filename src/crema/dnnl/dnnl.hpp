// The oneDNN engine's shared pieces: the CPU engine,
// a stream per thread, plain (Caffe-layout) memory descriptors, and the
// thread count of the calling thread's primitives, taken from the one CPU
// thread budget (oneDNN runs on OpenMP, whose thread count is per thread).
#ifndef CREMA_DNNL_DNNL_HPP_
#define CREMA_DNNL_DNNL_HPP_

#include <dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "crema/blob.hpp"
#include "crema/dnnl/channel_blocks.hpp"
#include "crema/util/math_functions.hpp"

namespace crema {

dnnl::engine& DnnlEngine();
// Sets the calling thread's OpenMP thread count to its thread budget. Called
// before a primitive is made as well as before it runs: oneDNN plans a
// primitive's work split for the thread count it sees when it is made, and a
// split that depended on what ran before on the thread would make two
// identical runs differ in the last bits.
void DnnlUseThreadBudget();
// Whether this CPU runs oneDNN's bf16 kernels natively (avx512_bf16 or
// newer); elsewhere bf16 is emulated or refused, slower than float.
bool DnnlHasBf16();
// Whether this CPU runs oneDNN's float Winograd convolution (AVX-512).
bool DnnlHasWinograd();
// The layout of oneDNN's direct convolution kernels for activations on this
// CPU: channels in blocks of one vector register (nChw16c with AVX-512,
// nChw8c with AVX2), and that block's width; format_tag::undef and 0 on a CPU
// with neither.
struct DnnlChannelBlocks {
  dnnl::memory::format_tag tag;
  int width;
};
DnnlChannelBlocks DnnlActivationBlocks();
// Whether a layer gets the bf16 kernels it asks for (compute_precision BF16):
// on a CPU with them, yes; elsewhere no, with a warning naming the layer the
// first time (*warned, the layer's own flag).
bool DnnlUsesBf16(const LayerParameter& param, bool* warned);
// The calling thread's stream (thread count set as above).
dnnl::stream& DnnlStream();
// Runs one primitive on the calling thread's stream and waits for it.
void DnnlRun(const dnnl::primitive& primitive, const std::unordered_map<int, dnnl::memory>& args);

// C = alpha op(A) op(B) + beta C, row-major, on the calling thread alone, with
// oneDNN's GEMM: it picks the widest vector kernels of the CPU it runs on
// (AVX-512 where there is), where OpenBLAS may be held to narrower ones
// (OPENBLAS_CORETYPE). Callers split large products themselves (cpu_gemm).
void DnnlGemmOnThisThread(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                          const float* A, int lda, const float* B, int ldb, float beta, float* C,
                          int ldc);

// f32 memory in Caffe's dense layout (nchw for 4 axes, oihw-like for weights).
inline dnnl::memory::desc PlainDesc(const std::vector<int>& shape) {
  dnnl::memory::dims dims(shape.begin(), shape.end());
  dnnl::memory::dims strides(dims.size());
  dnnl::memory::dim stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// f32 memory of the given dims laid out with the given strides (elements).
inline dnnl::memory::desc StridedDesc(const std::vector<int>& shape,
                                      const std::vector<int>& strides) {
  return dnnl::memory::desc(dnnl::memory::dims(shape.begin(), shape.end()),
                            dnnl::memory::data_type::f32,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

// The right padding that makes a window of `extent` moved by `stride`, with
// `left` padding, give `output` windows over `input` positions: Caffe's sizes
// floor (convolution) or ceil (pooling), so it can be negative or exceed the
// left one.
inline int RightPadding(int input, int output, int extent, int stride, int left) {
  return (output - 1) * stride + extent - input - left;
}

// Where a 2-D convolution's windows lie, as oneDNN takes it.
struct ConvolutionWindows {
  dnnl::memory::dims strides, dilates, pad_left, pad_right;
};

inline ConvolutionWindows WindowsOf(const std::vector<int>& kernel, const std::vector<int>& stride,
                                    const std::vector<int>& pad, const std::vector<int>& dilation,
                                    const std::vector<int>& input, const std::vector<int>& output) {
  ConvolutionWindows w;
  for (int axis = 0; axis < 2; ++axis) {
    const int extent = dilation[axis] * (kernel[axis] - 1) + 1;
    w.strides.push_back(stride[axis]);
    w.dilates.push_back(dilation[axis] - 1);
    w.pad_left.push_back(pad[axis]);
    w.pad_right.push_back(RightPadding(input[axis], output[axis], extent, stride[axis], pad[axis]));
  }
  return w;
}

// Wraps memory the caller owns (a blob's data or diff); no copy.
inline dnnl::memory Wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, DnnlEngine(), const_cast<void*>(data));
}

// One argument of a primitive made with layouts of oneDNN's choosing (format
// `any`): the blob's own memory where the chosen layout is the plain one,
// else a buffer of its own, filled from the blob (`In`) or copied back to it
// (`Out` then `Finish`) by reorders made once.
class DnnlArgument {
 public:
  DnnlArgument() = default;
  DnnlArgument(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen);
  // The argument holding the blob memory `data` (reordered when not plain).
  dnnl::memory In(const void* data) const;
  // As In, without the reorder: the own buffer still holds `data` from the
  // last In (or an Out) of an argument of the same layout.
  dnnl::memory Again(const void* data) const;
  // Whether the two arguments hold their data in the same layout.
  bool SameLayout(const DnnlArgument& other) const { return Desc() == other.Desc(); }
  // Memory for the primitive to write: `data` itself or the own buffer.
  dnnl::memory Out(void* data) const;
  // After the primitive ran: copies the own buffer back into `data`.
  void Finish(void* data) const;
  // As Finish, for a gradient that accumulates: adds what the primitive wrote
  // through Out(buffer) to `sum` (plain layout), straight from the own buffer
  // where a channel_blocks move reads it, else copied back to `buffer` first.
  void FinishAdding(float* buffer, float* sum) const;
  // Whether Finish is channel_blocks' move from nChw16c float, and the own
  // buffer the primitive wrote (valid while the argument lives).
  bool MovesChannelBlocksOut() const { return out_ == Move::kFloatBlocks; }
  const void* Written() const { return own_ ? own_.get_data_handle() : nullptr; }

 private:
  dnnl::memory::desc Desc() const { return own_ ? own_.get_desc() : plain_; }
  // Picks the channel_blocks moves for the chosen layout, if any (below).
  void ChooseMoves(const dnnl::memory::desc& chosen);

  dnnl::memory::desc plain_;
  dnnl::memory own_;  // empty where the chosen layout is the plain one
  dnnl::reorder to_own_, to_plain_;
  // Between float nchw and nChw16c (channels a multiple of 16) the moves of
  // channel_blocks.hpp replace the reorders: In to float or bf16 blocks,
  // Finish from float blocks; In of float oihw convolution weights to their
  // float or bf16 layouts, Finish of a float weight gradient back to oihw.
  enum class Move { kReorder, kFloatBlocks, kBf16Blocks, kBf16Weights, kFloatWeights };
  Move in_ = Move::kReorder, out_ = Move::kReorder;
  int num_ = 0, channels_ = 0, spatial_ = 0;
  FloatWeightLayout float_weight_layout_ = FloatWeightLayout::kInputRows;
  Bf16WeightLayout bf16_weight_layout_ = Bf16WeightLayout::kPairedInputs;
};

// The arguments of a layer's three training primitives (forward, backward
// data, backward weights), each in the layout its primitive chose, from the
// blobs' plain descriptors and the primitives' descriptors.
struct DnnlTrainingArguments {
  DnnlTrainingArguments() = default;
  template <typename ForwardPd, typename DataPd, typename WeightsPd>
  DnnlTrainingArguments(const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
                        const dnnl::memory::desc& dst, const ForwardPd& forward, const DataPd& data,
                        const WeightsPd& weights_pd)
      : forward_src(src, forward.src_desc()),
        forward_weights(weights, forward.weights_desc()),
        forward_dst(dst, forward.dst_desc()),
        data_diff_src(src, data.diff_src_desc()),
        data_weights(weights, data.weights_desc()),
        data_diff_dst(dst, data.diff_dst_desc()),
        weights_src(src, weights_pd.src_desc()),
        weights_diff_weights(weights, weights_pd.diff_weights_desc()),
        weights_diff_dst(dst, weights_pd.diff_dst_desc()) {}

  DnnlArgument forward_src, forward_weights, forward_dst;
  DnnlArgument data_diff_src, data_weights, data_diff_dst;
  DnnlArgument weights_src, weights_diff_weights, weights_diff_dst;
};

// Adds a gradient oneDNN wrote to a parameter's diff (Caffe layers accumulate
// parameter gradients; oneDNN overwrites).
template <typename Dtype>
void AccumulateInto(const Blob<Dtype>& gradient, Blob<Dtype>* parameter) {
  cpu_axpy(gradient.count(), Dtype(1), gradient.cpu_data(), parameter->mutable_cpu_diff());
}

}  // namespace crema

#endif  // CREMA_DNNL_DNNL_HPP_
