#include "crema/dnnl/dnnl.hpp"

#include <omp.h>

#include <memory>

#include "crema/dnnl/dnnl_twin.hpp"
#include "crema/util/thread_pool.hpp"

namespace crema {

dnnl::engine& DnnlEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void DnnlUseThreadBudget() { omp_set_num_threads(ThreadBudget()); }

bool DnnlHasBf16() {
  // oneDNN's ISA values are nested bit masks: a CPU with more has all bits.
  const unsigned bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & bf16) == bf16;
}

bool DnnlHasWinograd() {
  const unsigned avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & avx512) == avx512;
}

DnnlChannelBlocks DnnlActivationBlocks() {
  const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [isa](dnnl::cpu_isa wanted) {
    return (isa & static_cast<unsigned>(wanted)) == static_cast<unsigned>(wanted);
  };
  if (has(dnnl::cpu_isa::avx512_core)) return {dnnl::memory::format_tag::nChw16c, 16};
  if (has(dnnl::cpu_isa::avx2)) return {dnnl::memory::format_tag::nChw8c, 8};
  return {dnnl::memory::format_tag::undef, 0};
}

bool DnnlUsesBf16(const LayerParameter& param, bool* warned) {
  if (param.compute_precision() != BF16) return false;
  if (DnnlHasBf16()) return true;
  if (!*warned) {
    LOG(WARNING) << "layer '" << param.name()
                 << "': compute_precision BF16 needs a CPU with avx512_bf16, which this one "
                    "lacks; the layer computes in float";
    *warned = true;
  }
  return false;
}

dnnl::stream& DnnlStream() {
  thread_local std::unique_ptr<dnnl::stream> stream;
  if (!stream) stream.reset(new dnnl::stream(DnnlEngine()));
  DnnlUseThreadBudget();
  return *stream;
}

void DnnlRun(const dnnl::primitive& primitive, const std::unordered_map<int, dnnl::memory>& args) {
  dnnl::stream& stream = DnnlStream();
  primitive.execute(stream, args);
  stream.wait();
}

void DnnlGemmOnThisThread(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                          const float* A, int lda, const float* B, int ldb, float beta, float* C,
                          int ldc) {
  // oneDNN's GEMM runs on as many OpenMP threads as the caller's count allows;
  // here the caller's thread is the whole budget of this product.
  const int threads = omp_get_max_threads();
  if (threads != 1) omp_set_num_threads(1);
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha,
                                          A, lda, B, ldb, beta, C, ldc);
  if (threads != 1) omp_set_num_threads(threads);
  // Invariant: sgemm fails only on bad arguments, and these come from shaped blobs.
  CHECK_EQ(status, dnnl_success) << "oneDNN sgemm of " << M << "x" << N << "x" << K;
}

DnnlArgument::DnnlArgument(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen)
    : plain_(plain) {
  if (chosen == plain) return;
  own_ = dnnl::memory(chosen, DnnlEngine());
  ChooseMoves(chosen);
  // Only the reorders no move replaces are made (each is compiled code).
  if (in_ == Move::kReorder) {
    to_own_ =
        dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), plain, DnnlEngine(), chosen));
  }
  if (out_ == Move::kReorder) {
    to_plain_ =
        dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), chosen, DnnlEngine(), plain));
  }
}

void DnnlArgument::ChooseMoves(const dnnl::memory::desc& chosen) {
  const dnnl::memory::dims dims = plain_.dims();
  using Tag = dnnl::memory::format_tag;
  using Type = dnnl::memory::data_type;
  if (dims.size() != 4 || dims[1] % 16 != 0 || !ChannelBlocksSupported() ||
      plain_ != dnnl::memory::desc(dims, Type::f32, Tag::abcd)) {
    return;
  }
  // The layouts channel_blocks moves to, and back where a primitive writes
  // them (bf16 arguments are only read). Weights (oihw) need whole blocks of
  // outputs too; ABcd16b16a is also the float weight gradient's layout.
  struct Candidate {
    Type type;
    Tag tag;
    Move in, out;
    bool weights;
    FloatWeightLayout float_layout;
    Bf16WeightLayout bf16_layout;
  };
  const auto kInputRows = FloatWeightLayout::kInputRows;
  const auto kPairedInputs = Bf16WeightLayout::kPairedInputs;
  const Candidate candidates[] = {{Type::f32, Tag::aBcd16b, Move::kFloatBlocks, Move::kFloatBlocks,
                                   false, kInputRows, kPairedInputs},
                                  {Type::f32, Tag::ABcd16b16a, Move::kFloatWeights,
                                   Move::kFloatWeights, true, kInputRows, kPairedInputs},
                                  {Type::f32, Tag::ABcd16a16b, Move::kFloatWeights, Move::kReorder,
                                   true, FloatWeightLayout::kOutputRows, kPairedInputs},
                                  {Type::f32, Tag::BAcd16a16b, Move::kFloatWeights, Move::kReorder,
                                   true, FloatWeightLayout::kOutputRowsInputsOuter, kPairedInputs},
                                  {Type::bf16, Tag::aBcd16b, Move::kBf16Blocks, Move::kReorder,
                                   false, kInputRows, kPairedInputs},
                                  {Type::bf16, Tag::ABcd8b16a2b, Move::kBf16Weights, Move::kReorder,
                                   true, kInputRows, kPairedInputs},
                                  {Type::bf16, Tag::ABcd8a16b2a, Move::kBf16Weights, Move::kReorder,
                                   true, kInputRows, Bf16WeightLayout::kPairedOutputs},
                                  {Type::bf16, Tag::BAcd8a16b2a, Move::kBf16Weights, Move::kReorder,
                                   true, kInputRows, Bf16WeightLayout::kPairedOutputsInputsOuter}};
  for (const Candidate& candidate : candidates) {
    if ((candidate.type == Type::bf16 && !DnnlHasBf16()) ||
        (candidate.weights && dims[0] % 16 != 0) ||
        chosen != dnnl::memory::desc(dims, candidate.type, candidate.tag)) {
      continue;
    }
    in_ = candidate.in;
    out_ = candidate.out;
    float_weight_layout_ = candidate.float_layout;
    bf16_weight_layout_ = candidate.bf16_layout;
    // num_, channels_, spatial_: images, channels, positions of activations;
    // outputs, inputs, kernel positions of weights.
    num_ = static_cast<int>(dims[0]);
    channels_ = static_cast<int>(dims[1]);
    spatial_ = static_cast<int>(dims[2] * dims[3]);
    return;
  }
}

dnnl::memory DnnlArgument::In(const void* data) const {
  const float* plain = static_cast<const float*>(data);
  void* own = in_ == Move::kReorder ? nullptr : own_.get_data_handle();
  switch (in_) {
    case Move::kFloatBlocks:
      PlainToChannelBlocks(plain, static_cast<float*>(own), num_, channels_, spatial_);
      return own_;
    case Move::kBf16Blocks:
      PlainToChannelBlocksBf16(plain, static_cast<uint16_t*>(own), num_, channels_, spatial_);
      return own_;
    case Move::kBf16Weights:
      WeightsToBf16Blocks(plain, static_cast<uint16_t*>(own), num_, channels_, spatial_,
                          bf16_weight_layout_);
      return own_;
    case Move::kFloatWeights:
      WeightsToFloatBlocks(plain, static_cast<float*>(own), num_, channels_, spatial_,
                           float_weight_layout_);
      return own_;
    case Move::kReorder:
      break;
  }
  const dnnl::memory blob = Wrap(plain_, data);
  if (!own_) return blob;
  DnnlRun(to_own_, {{DNNL_ARG_FROM, blob}, {DNNL_ARG_TO, own_}});
  return own_;
}

dnnl::memory DnnlArgument::Again(const void* data) const {
  return own_ ? own_ : Wrap(plain_, data);
}

dnnl::memory DnnlArgument::Out(void* data) const { return own_ ? own_ : Wrap(plain_, data); }

void DnnlArgument::Finish(void* data) const {
  const float* own = static_cast<const float*>(own_ ? own_.get_data_handle() : nullptr);
  if (out_ == Move::kFloatBlocks) {
    return ChannelBlocksToPlain(own, static_cast<float*>(data), num_, channels_, spatial_);
  }
  if (out_ == Move::kFloatWeights) {
    return WeightBlocksToPlain(own, static_cast<float*>(data), num_, channels_, spatial_);
  }
  if (own_) DnnlRun(to_plain_, {{DNNL_ARG_FROM, own_}, {DNNL_ARG_TO, Wrap(plain_, data)}});
}

void DnnlArgument::FinishAdding(float* buffer, float* sum) const {
  if (out_ == Move::kFloatWeights) {
    const float* own = static_cast<const float*>(own_.get_data_handle());
    return WeightBlocksAddToPlain(own, sum, num_, channels_, spatial_);
  }
  Finish(buffer);
  cpu_axpy(static_cast<int>(plain_.get_size() / sizeof(float)), 1.f, buffer, sum);
}

Body<double> DnnlFloatOnlyBody() {
  return Body<double>{[](const BodyRequest&) {
                        return Verdict{false, "float data only"};
                      },
                      nullptr};
}

}  // namespace crema
