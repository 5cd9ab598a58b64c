// The lowering dnnl_fold_chains.cpp: in a net made to run forward (TEST
// phase, no force_backward) each oneDNN convolution and the BatchNorm,
// Scale and ReLU/ReLU6 in place after it run as one inference primitive,
// and so do Pooling and two-bottom Eltwise layers (with the ReLU after
// one) that read a folded layer's output, through a Split too.
// The folded net must compute what the plain one (engine CAFFE) computes,
// within float rounding: whole passes, passes that end or go on inside a
// chain, passes after the weights or statistics changed, backward passes;
// and a net that may run backward every pass is left plain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "crema/dnnl/default_policy.hpp"
#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/dnnl_folded_conv_layer.hpp"
#include "crema/filler.hpp"
#include "crema/net.hpp"
#include "crema/net_rewrites/folded_chain.hpp"
#include "crema/util/thread_pool.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// conv1 (+ bn1, scale1 with bias, relu1), a depthwise dw (+ bn2, scale2
// without bias, relu6), a pointwise pw (+ a leaky ReLU) of 24 channels (a
// block and a half), a head convolution alone on pw (permuted to
// channels-last, and with its last two axes swapped), pw normalised per
// position (Normalize) and a convolution on that, and a residual block on
// pw: a max pool, a convolution res, their sum (+ ReLU), an average pool
// with a last window past the input, and the maximum of the sum and the
// pool. pw and head have several readers, so the net splits them. ENGINE
// is replaced in every convolution, pooling and eltwise.
const char* kNet =
    "name: 'chains' FORCE "
    "layer { name: 'input' type: 'Input' top: 'data'"
    "  input_param { shape { dim: 2 dim: 8 dim: 10 dim: 9 } } }"
    "layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1'"
    "  convolution_param { num_output: 16 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'bn1' type: 'BatchNorm' bottom: 'conv1' top: 'conv1'"
    "  batch_norm_param { use_global_stats: true } }"
    "layer { name: 'scale1' type: 'Scale' bottom: 'conv1' top: 'conv1'"
    "  scale_param { bias_term: true filler { type: 'gaussian' mean: 1 std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'relu1' type: 'ReLU' bottom: 'conv1' top: 'conv1' }"
    "layer { name: 'dw' type: 'Convolution' bottom: 'conv1' top: 'dw'"
    "  convolution_param { num_output: 16 group: 16 kernel_size: 3 pad: 1 stride: 2"
    "    bias_term: false ENGINE weight_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'bn2' type: 'BatchNorm' bottom: 'dw' top: 'dw'"
    "  batch_norm_param { use_global_stats: true } }"
    "layer { name: 'scale2' type: 'Scale' bottom: 'dw' top: 'dw'"
    "  scale_param { filler { type: 'gaussian' mean: 2 std: 0.5 } } }"
    "layer { name: 'relu6' type: 'ReLU6' bottom: 'dw' top: 'dw' }"
    "layer { name: 'pw' type: 'Convolution' bottom: 'dw' top: 'pw'"
    "  convolution_param { num_output: 24 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } } }"
    "layer { name: 'leaky' type: 'ReLU' bottom: 'pw' top: 'pw' relu_param { negative_slope: 0.1 } }"
    "layer { name: 'head' type: 'Convolution' bottom: 'pw' top: 'head'"
    "  convolution_param { num_output: 5 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } } }"
    "layer { name: 'head_perm' type: 'Permute' bottom: 'head' top: 'head_perm'"
    "  permute_param { order: 0 order: 2 order: 3 order: 1 } }"
    "layer { name: 'head_swap' type: 'Permute' bottom: 'head' top: 'head_swap'"
    "  permute_param { order: 0 order: 1 order: 3 order: 2 } }"
    "layer { name: 'norm' type: 'Normalize' bottom: 'pw' top: 'norm'"
    "  norm_param { across_spatial: false channel_shared: false"
    "    scale_filler { type: 'gaussian' mean: 2 std: 0.5 } } }"
    "layer { name: 'norm_head' type: 'Convolution' bottom: 'norm' top: 'norm_head'"
    "  convolution_param { num_output: 4 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } } }"
    "layer { name: 'pool' type: 'Pooling' bottom: 'pw' top: 'pool'"
    "  pooling_param { pool: MAX kernel_size: 3 stride: 1 pad: 1 ENGINE } }"
    "layer { name: 'res' type: 'Convolution' bottom: 'pool' top: 'res'"
    "  convolution_param { num_output: 24 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'sum' type: 'Eltwise' bottom: 'res' bottom: 'pool' top: 'sum'"
    "  eltwise_param { ENGINE } }"
    "layer { name: 'relu_sum' type: 'ReLU' bottom: 'sum' top: 'sum' }"
    "layer { name: 'avg' type: 'Pooling' bottom: 'sum' top: 'avg'"
    "  pooling_param { pool: AVE kernel_size: 2 stride: 2 ENGINE } }"
    "layer { name: 'max' type: 'Eltwise' bottom: 'sum' bottom: 'pool' top: 'max'"
    "  eltwise_param { operation: MAX ENGINE } }";

// A TEST-phase net of `text` with every ENGINE replaced by `engine` (and
// FORCE, where the text has it, by force_backward as asked).
std::unique_ptr<Net<float>> MakeNetOf(std::string text, const std::string& engine,
                                      bool force_backward = false) {
  if (const size_t at = text.find("FORCE"); at != std::string::npos) {
    text.replace(at, 5, force_backward ? "force_backward: true" : "");
  }
  for (size_t at; (at = text.find("ENGINE")) != std::string::npos;) text.replace(at, 6, engine);
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(TEST);
  param.set_engine_mode(NetParameter::AS_WRITTEN);  // engine CAFFE: the reference bodies
  return std::unique_ptr<Net<float>>(new Net<float>(param));
}

std::unique_ptr<Net<float>> MakeNet(const std::string& engine, bool force_backward = false) {
  return MakeNetOf(kNet, engine, force_backward);
}

bool IsFolded(const Net<float>& net, const std::string& layer) {
  return dynamic_cast<const FoldedLayer*>(net.layer_by_name(layer).get()) != nullptr;
}

// Whether layer `name` of a folded net left its last pass's output pending
// for its reader.
bool LeftPending(Net<float>& net, const std::string& name) {
  auto* stand_in = dynamic_cast<FoldedLayer*>(net.layer_by_name(name).get());
  auto* folded =
      stand_in ? dynamic_cast<DnnlFoldedConvolution<ConvolutionLayer>*>(&stand_in->chain().folded())
               : nullptr;
  return folded && folded->PendingFor(net.blob_by_name(name).get()) != nullptr;
}

class FoldIntoConvolutionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Context::set_mode(Context::CPU);
    Context::set_random_seed(1701);
    folded_ = MakeNet("");
    plain_ = MakeNet("engine: CAFFE");
    // Stored statistics far from 0 and 1 (sums with an average factor of 2).
    for (const char* name : {"bn1", "bn2"}) {
      auto& stats = folded_->layer_by_name(name)->blobs();
      for (int c = 0; c < 16; ++c) {
        stats[0]->mutable_cpu_data()[c] = 0.3f * (c - 7.5f);
        stats[1]->mutable_cpu_data()[c] = 0.5f + 0.25f * c;
      }
      stats[2]->mutable_cpu_data()[0] = 2.0f;
    }
    ShareWeightsAndInput(folded_.get(), plain_.get());
  }

  void ExpectSame(const Blob<float>& want, const Blob<float>& got, bool diff,
                  const std::string& what) {
    ASSERT_EQ(want.count(), got.count()) << what;
    const float* a = diff ? want.cpu_diff() : want.cpu_data();
    const float* b = diff ? got.cpu_diff() : got.cpu_data();
    for (int i = 0; i < want.count(); ++i) {
      ASSERT_NEAR(a[i], b[i], 1e-4f * (1 + std::fabs(a[i]))) << what << " at " << i;
    }
  }
  void ExpectSameBlobs() {
    for (const char* name : {"conv1", "dw", "pw", "head", "head_perm", "head_swap", "norm",
                             "norm_head", "pool", "res", "sum", "avg", "max"}) {
      ExpectSame(*plain_->blob_by_name(name), *folded_->blob_by_name(name), false, name);
    }
  }

  std::unique_ptr<Net<float>> folded_, plain_;
};

TEST_F(FoldIntoConvolutionsTest, ChainsFoldAndKeepTheirNamesTypesAndBlobs) {
  for (const char* layer :
       {"conv1",     "bn1",  "scale1", "relu1", "dw",        "bn2",       "scale2",
        "relu6",     "pw",   "leaky",  "head",  "head_perm", "head_swap", "norm",
        "norm_head", "pool", "res",    "sum",   "relu_sum",  "avg",       "max"}) {
    EXPECT_TRUE(IsFolded(*folded_, layer)) << layer;
    EXPECT_FALSE(IsFolded(*plain_, layer)) << layer;
    EXPECT_STREQ(folded_->layer_by_name(layer)->type(), plain_->layer_by_name(layer)->type());
  }
  EXPECT_EQ(folded_->params().size(), plain_->params().size());
  NetParameter saved;
  folded_->ToProto(&saved);
  EXPECT_EQ(saved.layer(LayerIndex(*folded_, "scale1")).blobs_size(), 2);
}

TEST_F(FoldIntoConvolutionsTest, ForwardMatchesThePlainLayers) {
  for (int pass = 0; pass < 2; ++pass) {  // the second reads the packed weights again
    folded_->Forward();
    plain_->Forward();
    // res, read only by sum, runs inside it where this CPU has blocks.
    if (DnnlActivationBlocks().width != 0) {
      EXPECT_TRUE(LeftPending(*folded_, "res"));
    }
    ExpectSameBlobs();
  }
}

TEST_F(FoldIntoConvolutionsTest, APassThatStopsBeforeAFusedConvolutionKeepsItsOutput) {
  folded_->Forward();
  plain_->Forward();
  // pool changes through a pass that stops there: res, left pending by the
  // first pass, still holds what that pass computed from the old pool.
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->layer_by_name("pw")->blobs()[0]->mutable_cpu_data()[1] = 3.0f;
    net->ForwardTo(LayerIndex(*net, "pool"));
  }
  ExpectSameBlobs();
}

TEST_F(FoldIntoConvolutionsTest, PassesThatEndAndGoOnInsideAChain) {
  folded_->Forward();  // a folded pass first: the chain's state is the folded one
  const int bn1 = LayerIndex(*folded_, "bn1");
  folded_->ForwardFromTo(0, bn1);
  plain_->ForwardFromTo(0, bn1);
  ExpectSame(*plain_->blob_by_name("conv1"), *folded_->blob_by_name("conv1"), false,
             "conv1 after bn1");
  folded_->ForwardFrom(bn1 + 1);
  plain_->ForwardFrom(bn1 + 1);
  ExpectSameBlobs();
}

TEST_F(FoldIntoConvolutionsTest, ChangedWeightsAndStatisticsAreFoldedAgain) {
  folded_->Forward();
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    float* weights = net->layer_by_name("pw")->blobs()[0]->mutable_cpu_data();
    weights[3] = -2.0f;
    net->layer_by_name("bn2")->blobs()[0]->mutable_cpu_data()[5] = 4.0f;
    net->layer_by_name("scale1")->blobs()[1]->mutable_cpu_data()[2] = -1.5f;
  }
  folded_->Forward();
  plain_->Forward();
  ExpectSameBlobs();
}

TEST_F(FoldIntoConvolutionsTest, AnInputChangedBetweenPassesIsRead) {
  folded_->Forward();
  plain_->Forward();
  // pw reads dw's blocked output (both in oneDNN's channels-last layout):
  // it must see the change made to the blob.
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    const int pw = LayerIndex(*net, "pw");
    net->blob_by_name("dw")->mutable_cpu_data()[7] = 30.0f;
    net->ForwardFrom(pw);
  }
  ExpectSameBlobs();
}

TEST_F(FoldIntoConvolutionsTest, AnEltwiseInputChangedBetweenPassesIsRead) {
  folded_->Forward();
  plain_->Forward();
  // sum reads res's and pool's blocked outputs: it must see the change
  // made to pool after res read it.
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->blob_by_name("pool")->mutable_cpu_data()[11] = -25.0f;
    net->ForwardFrom(LayerIndex(*net, "sum"));
  }
  ExpectSameBlobs();
}

TEST_F(FoldIntoConvolutionsTest, ANewInputShapeAndBlobsReadBetweenPasses) {
  folded_->Forward();
  plain_->Forward();
  ExpectSameBlobs();
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->blob_by_name("data")->Reshape({3, 8, 7, 12});
    net->Reshape();
  }
  FillerParameter gaussian;
  gaussian.set_type("gaussian");
  GetFiller<float>(gaussian)->Fill(folded_->blob_by_name("data").get());
  plain_->blob_by_name("data")->CopyFrom(*folded_->blob_by_name("data"));
  for (int pass = 0; pass < 2; ++pass) {
    folded_->Forward();
    plain_->Forward();
    // Read one blob in the middle (its move into Caffe's layout happens
    // here), then all of them.
    ExpectSame(*plain_->blob_by_name("dw"), *folded_->blob_by_name("dw"), false, "dw");
    ExpectSameBlobs();
  }
}

TEST_F(FoldIntoConvolutionsTest, BackwardRunsThePlainLayers) {
  folded_->Forward();
  plain_->Forward();
  FillerParameter gaussian;
  gaussian.set_type("gaussian");
  Blob<float>& head = *folded_->blob_by_name("head");
  GetFiller<float>(gaussian)->Fill(&head);
  std::copy(head.cpu_data(), head.cpu_data() + head.count(), head.mutable_cpu_diff());
  plain_->blob_by_name("head")->CopyFrom(head, true);
  folded_->ClearParamDiffs();
  plain_->ClearParamDiffs();
  folded_->Backward();
  plain_->Backward();
  for (size_t i = 0; i < plain_->params().size(); ++i) {
    ExpectSame(*plain_->params()[i], *folded_->params()[i], true,
               "parameter " + std::to_string(i) + " gradient");
  }
  // And the next pass folds again.
  folded_->Forward();
  plain_->Forward();
  ExpectSameBlobs();
}

TEST_F(FoldIntoConvolutionsTest, NetsThatMayRunBackwardStayPlain) {
  auto forced = MakeNet("", true);
  EXPECT_FALSE(IsFolded(*forced, "conv1"));
  EXPECT_FALSE(IsFolded(*forced, "relu1"));
}

// Pointwise convolutions whose only reader is a 3x3 depthwise one (stride
// 1 and 2, of class Convolution and DepthwiseConvolution), as in
// MobileNet: each pair runs in one oneDNN primitive, and the pointwise
// output is computed only when read. oneDNN has a single fused kernel only
// where the pointwise output is more than twice the second-level caches of
// the threads it runs on (here 6 and 8 MB, on one thread); elsewhere its
// stand-in of two kernels in turn (kSmallPairs).
const char* kPairs =
    "name: 'pairs' "
    "layer { name: 'input' type: 'Input' top: 'data'"
    "  input_param { shape { dim: 2 dim: 8 dim: 128 dim: 128 } } }"
    "layer { name: 'a' type: 'Convolution' bottom: 'data' top: 'a'"
    "  convolution_param { num_output: 32 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.1 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'relu_a' type: 'ReLU' bottom: 'a' top: 'a' }"
    "layer { name: 'pw1' type: 'Convolution' bottom: 'a' top: 'pw1'"
    "  convolution_param { num_output: 64 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'bn1' type: 'BatchNorm' bottom: 'pw1' top: 'pw1'"
    "  batch_norm_param { use_global_stats: true } }"
    "layer { name: 'relu1' type: 'ReLU' bottom: 'pw1' top: 'pw1' }"
    "layer { name: 'dw1' type: 'Convolution' bottom: 'pw1' top: 'dw1'"
    "  convolution_param { num_output: 64 group: 64 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'relu6' type: 'ReLU6' bottom: 'dw1' top: 'dw1' }"
    "layer { name: 'pw2' type: 'Convolution' bottom: 'dw1' top: 'pw2'"
    "  convolution_param { num_output: 48 kernel_size: 1 bias_term: false ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } } }"
    "layer { name: 'dw2' type: 'DepthwiseConvolution' bottom: 'pw2' top: 'dw2'"
    "  convolution_param { num_output: 48 kernel_size: 3 pad: 1 stride: 2 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'relu2' type: 'ReLU' bottom: 'dw2' top: 'dw2' }";

class FusedPairsTest : public FoldIntoConvolutionsTest {
 protected:
  void SetUp() override {
    Context::set_mode(Context::CPU);
    Context::set_random_seed(1709);
    budget_ = ThreadBudget();
    SetThreadBudget(1);
    MakeNets(kPairs);
  }
  void MakeNets(const std::string& proto) {
    folded_ = MakeNetOf(proto, "");
    plain_ = MakeNetOf(proto, "engine: CAFFE");
    auto& stats = folded_->layer_by_name("bn1")->blobs();
    for (int c = 0; c < 64; ++c) {
      stats[0]->mutable_cpu_data()[c] = 0.1f * (c - 30);
      stats[1]->mutable_cpu_data()[c] = 0.5f + 0.05f * c;
    }
    stats[2]->mutable_cpu_data()[0] = 1.0f;
    ShareWeightsAndInput(folded_.get(), plain_.get());
  }
  void TearDown() override { SetThreadBudget(budget_); }
  // Whether the pairs run fused here: on a CPU with channel blocks (in
  // one kernel or two). Elsewhere they run apart, and only the values are
  // checked.
  static bool PairsFuse() { return DnnlActivationBlocks().width != 0; }
  // Both nets run forward, and the pointwise outputs were left pending
  // where the pairs fuse.
  void ForwardBoth() {
    folded_->Forward();
    plain_->Forward();
    if (PairsFuse()) {
      EXPECT_TRUE(LeftPending(*folded_, "pw1"));
      EXPECT_TRUE(LeftPending(*folded_, "pw2"));
    }
  }
  void ExpectSamePairs() {
    for (const char* name : {"a", "pw1", "dw1", "pw2", "dw2"}) {
      ExpectSame(*plain_->blob_by_name(name), *folded_->blob_by_name(name), false, name);
    }
  }

  int budget_ = 1;
};

TEST_F(FusedPairsTest, ForwardMatchesThePlainLayers) {
  ForwardBoth();
  // The last outputs first: they must not need the pending ones.
  for (const char* name : {"dw2", "dw1"}) {
    ExpectSame(*plain_->blob_by_name(name), *folded_->blob_by_name(name), false, name);
  }
  if (PairsFuse()) {
    EXPECT_TRUE(LeftPending(*folded_, "pw1"));
  }
  ExpectSamePairs();  // reads pw1 and pw2: their pending passes run
  EXPECT_FALSE(LeftPending(*folded_, "pw1"));
  ForwardBoth();  // again, on the packed weights
  ExpectSamePairs();
}

TEST_F(FusedPairsTest, APassThatStopsBeforeThePairKeepsTheOutputAsComputed) {
  ForwardBoth();
  // A new input through `a` alone: pw1 still holds what the first pass
  // computed from the old `a`.
  FillerParameter gaussian;
  gaussian.set_type("gaussian");
  GetFiller<float>(gaussian)->Fill(folded_->blob_by_name("data").get());
  plain_->blob_by_name("data")->CopyFrom(*folded_->blob_by_name("data"));
  const int relu_a = LayerIndex(*folded_, "relu_a");
  folded_->ForwardFromTo(0, relu_a);
  plain_->ForwardFromTo(0, relu_a);
  ExpectSamePairs();
  folded_->ForwardFrom(relu_a + 1);
  plain_->ForwardFrom(relu_a + 1);
  ExpectSamePairs();
}

TEST_F(FusedPairsTest, AnInputWrittenAfterThePassLeavesTheOutputAsComputed) {
  ForwardBoth();
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->blob_by_name("dw1")->mutable_cpu_data()[9] = 40.0f;
  }
  ExpectSamePairs();  // pw2 from dw1 as the pass left it
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->ForwardFrom(LayerIndex(*net, "pw2"));
  }
  ExpectSamePairs();  // and from the written dw1
}

// A memory exposed (a numpy view held across passes) takes deferred
// contents at once: the pointwise pass runs then, and its reader reads it.
TEST_F(FusedPairsTest, AnExposedPointwiseOutputIsWrittenAtItsPass) {
  SyncedMemory& memory = *folded_->blob_by_name("pw1")->data();
  memory.Expose();
  folded_->Forward();
  plain_->Forward();
  EXPECT_FALSE(LeftPending(*folded_, "pw1"));
  ExpectSamePairs();
  memory.Unexpose();
}

TEST_F(FusedPairsTest, APointwiseOutputWrittenBeforeItsReaderIsRead) {
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->ForwardTo(LayerIndex(*net, "relu1"));
    net->blob_by_name("pw1")->mutable_cpu_data()[5] = -7.0f;
    net->ForwardFrom(LayerIndex(*net, "dw1"));
  }
  ExpectSamePairs();
}

// The same pairs on planes of 12x12: pointwise outputs of 72 and 54 KB,
// which oneDNN fuses only in its stand-in of two kernels in turn, the
// pointwise output in the primitive's scratchpad. It is still left pending
// and computed when read.
TEST_F(FusedPairsTest, SmallPairsRunFusedInTwoKernels) {
  std::string small = kPairs;
  const std::string plane = "dim: 128 dim: 128";
  small.replace(small.find(plane), plane.size(), "dim: 12 dim: 12");
  MakeNets(small);
  ForwardBoth();
  for (const char* name : {"dw2", "dw1"}) {
    ExpectSame(*plain_->blob_by_name(name), *folded_->blob_by_name(name), false, name);
  }
  ExpectSamePairs();
  ForwardBoth();
  ExpectSamePairs();
}

// Where a folded convolution asked for Winograd runs it: wide 3x3 stride-1
// windows on planes of 256 positions or more.
TEST(FoldIntoConvolutionsWinogradTest, WinogradWhereItPays) {
  const ConvolutionShape wide{3, 3, 1, 1, 1, 1, 1, 64, 128, 38 * 38};
  EXPECT_TRUE(FoldedWinogradPays(wide));
  ConvolutionShape s = wide;
  s.output_channels = 24;  // an SSD head
  EXPECT_FALSE(FoldedWinogradPays(s));
  s = wide;
  s.input_channels = 32;
  EXPECT_FALSE(FoldedWinogradPays(s));
  s = wide;
  s.output_positions = 10 * 10;
  EXPECT_FALSE(FoldedWinogradPays(s));
  s = wide;
  s.stride_h = s.stride_w = 2;
  EXPECT_FALSE(FoldedWinogradPays(s));
  s = wide;
  s.kernel_h = s.kernel_w = 1;
  EXPECT_FALSE(FoldedWinogradPays(s));
  s = wide;
  s.groups = 2;
  EXPECT_FALSE(FoldedWinogradPays(s));
  s = wide;
  s.dilation_h = 2;
  EXPECT_FALSE(FoldedWinogradPays(s));
}

// A net that asks for Winograd (convolution_algorithm: WINOGRAD; on a CPU
// with it, oneDNN's Winograd kernels then run the folded 3x3 convolutions),
// one layer asking for DIRECT, folded against engine CAFFE: within 1e-5 of
// each output's largest value.
TEST(FoldIntoConvolutionsWinogradTest, AskedForWinogradMatchesThePlainLayers) {
  Context::set_mode(Context::CPU);
  Context::set_random_seed(1703);
  const std::string net =
      "name: 'wide' convolution_algorithm: WINOGRAD "
      "layer { name: 'input' type: 'Input' top: 'data'"
      "  input_param { shape { dim: 2 dim: 64 dim: 17 dim: 16 } } }"
      "layer { name: 'a' type: 'Convolution' bottom: 'data' top: 'a'"
      "  convolution_param { num_output: 80 kernel_size: 3 pad: 1 ENGINE"
      "    weight_filler { type: 'gaussian' std: 0.05 } bias_filler { type: 'gaussian' } } }"
      "layer { name: 'relu' type: 'ReLU' bottom: 'a' top: 'a' }"
      "layer { name: 'b' type: 'Convolution' bottom: 'a' top: 'b' convolution_algorithm: DIRECT"
      "  convolution_param { num_output: 64 kernel_size: 3 pad: 1 ENGINE"
      "    weight_filler { type: 'gaussian' std: 0.05 } } }"
      "layer { name: 'c' type: 'Convolution' bottom: 'b' top: 'c'"
      "  convolution_param { num_output: 64 kernel_size: 3 pad: 1 ENGINE"
      "    weight_filler { type: 'gaussian' std: 0.05 } } }";
  auto folded = MakeNetOf(net, ""), plain = MakeNetOf(net, "engine: CAFFE");
  ASSERT_TRUE(IsFolded(*folded, "a"));
  ShareWeightsAndInput(folded.get(), plain.get());
  folded->Forward();
  plain->Forward();
  for (const char* name : {"a", "b", "c"}) {
    const Blob<float>& want = *plain->blob_by_name(name);
    const Blob<float>& got = *folded->blob_by_name(name);
    float largest = 0;
    for (int i = 0; i < want.count(); ++i)
      largest = std::max(largest, std::fabs(want.cpu_data()[i]));
    for (int i = 0; i < want.count(); ++i) {
      ASSERT_NEAR(want.cpu_data()[i], got.cpu_data()[i], 1e-5f * largest) << name << " at " << i;
    }
  }
}

}  // namespace
}  // namespace crema
