// The folded outputs' arena (dnnl/folded_arena.hpp): in a folded net, a
// convolution's output read only by another convolution that is not
// depthwise shares a buffer with outputs whose lives do not overlap, and
// runs its pass again when its values are asked for after another wrote
// the buffer. Every blob must read as the plain net (engine CAFFE) leaves
// it, within float rounding: after whole passes, in any reading order,
// after passes that stop early, after the input or an output was written,
// at a new input shape, with its memory exposed, and after the net is gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/dnnl/dnnl.hpp"
#include "crema/dnnl/folded_output.hpp"
#include "crema/filler.hpp"
#include "crema/net.hpp"
#include "crema/net_rewrites/folded_chain.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// Seven convolutions, 3x3 and 1x1 by turns, on 16 channels and more (so
// every one reads channel blocks): c1..c6 each read only by the next, c7
// the net's output.
const char* kChain =
    "name: 'chain' "
    "layer { name: 'input' type: 'Input' top: 'data'"
    "  input_param { shape { dim: 2 dim: 16 dim: 12 dim: 12 } } }"
    "layer { name: 'c1' type: 'Convolution' bottom: 'data' top: 'c1'"
    "  convolution_param { num_output: 32 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.1 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'relu1' type: 'ReLU' bottom: 'c1' top: 'c1' }"
    "layer { name: 'c2' type: 'Convolution' bottom: 'c1' top: 'c2'"
    "  convolution_param { num_output: 32 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'c3' type: 'Convolution' bottom: 'c2' top: 'c3'"
    "  convolution_param { num_output: 32 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.1 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'relu3' type: 'ReLU' bottom: 'c3' top: 'c3' }"
    "layer { name: 'c4' type: 'Convolution' bottom: 'c3' top: 'c4'"
    "  convolution_param { num_output: 48 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'c5' type: 'Convolution' bottom: 'c4' top: 'c5'"
    "  convolution_param { num_output: 32 kernel_size: 3 pad: 1 stride: 2 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.1 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'c6' type: 'Convolution' bottom: 'c5' top: 'c6'"
    "  convolution_param { num_output: 32 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'relu6' type: 'ReLU' bottom: 'c6' top: 'c6' }"
    "layer { name: 'c7' type: 'Convolution' bottom: 'c6' top: 'c7'"
    "  convolution_param { num_output: 16 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.1 } bias_filler { type: 'gaussian' } } }";

const std::vector<std::string> kOutputs{"c1", "c2", "c3", "c4", "c5", "c6", "c7"};

// A TEST-phase net of `text` with every ENGINE replaced by `engine`.
std::unique_ptr<Net<float>> ArenaNetOf(std::string text, const std::string& engine) {
  for (size_t at; (at = text.find("ENGINE")) != std::string::npos;) text.replace(at, 6, engine);
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(TEST);
  param.set_engine_mode(NetParameter::AS_WRITTEN);  // engine CAFFE: the reference bodies
  return std::unique_ptr<Net<float>>(new Net<float>(param));
}

// Whether the output of folded layer `name` lies in an arena slot.
bool Pooled(Net<float>& net, const std::string& name) {
  auto* stand_in = dynamic_cast<FoldedLayer*>(net.layer_by_name(name).get());
  auto* output = stand_in ? dynamic_cast<FoldedOutput*>(&stand_in->chain().folded()) : nullptr;
  return output && output->Pooled();
}

void ExpectSame(const Blob<float>& want, const Blob<float>& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  const float* a = want.cpu_data();
  const float* b = got.cpu_data();
  for (int i = 0; i < want.count(); ++i) {
    ASSERT_NEAR(a[i], b[i], 1e-4f * (1 + std::fabs(a[i]))) << what << " at " << i;
  }
}

class FoldedArenaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Context::set_mode(Context::CPU);
    Context::set_random_seed(1723);
    folded_ = ArenaNetOf(kChain, "");
    plain_ = ArenaNetOf(kChain, "engine: CAFFE");
    ShareWeightsAndInput(folded_.get(), plain_.get());
  }
  void ForwardBoth() {
    folded_->Forward();
    plain_->Forward();
  }
  void ExpectSameBlobs(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      ExpectSame(*plain_->blob_by_name(name), *folded_->blob_by_name(name), name);
    }
  }
  void FillInput() {
    FillerParameter gaussian;
    gaussian.set_type("gaussian");
    GetFiller<float>(gaussian)->Fill(folded_->blob_by_name("data").get());
    plain_->blob_by_name("data")->CopyFrom(*folded_->blob_by_name("data"));
  }
  // Whether oneDNN runs the net in channel blocks here (elsewhere nothing
  // is pooled, and only the values are checked).
  static bool Blocks() { return DnnlActivationBlocks().width != 0; }

  std::unique_ptr<Net<float>> folded_, plain_;
};

TEST_F(FoldedArenaTest, OutputsReadOnlyByAConvolutionShareSlots) {
  ForwardBoth();
  if (Blocks()) {
    for (const char* name : {"c1", "c2", "c3", "c4", "c5", "c6"}) {
      EXPECT_TRUE(Pooled(*folded_, name)) << name;
    }
  }
  EXPECT_FALSE(Pooled(*folded_, "c7"));  // the net's output
  // Last to first: each read restores what the later passes overwrote.
  ExpectSameBlobs({"c7", "c6", "c5", "c4", "c3", "c2", "c1"});
  FillInput();
  ForwardBoth();
  ExpectSameBlobs({"c3", "c1", "c6", "c2", "c7", "c4", "c5"});
}

TEST_F(FoldedArenaTest, APassThatStopsEarlyKeepsTheLaterOutputs) {
  ForwardBoth();
  FillInput();
  // c4..c7 still hold what the first pass computed from the old input.
  for (Net<float>* net : {folded_.get(), plain_.get()}) net->ForwardTo(LayerIndex(*net, "c3"));
  ExpectSameBlobs({"c5", "c4", "c6", "c7", "c3", "c2", "c1"});
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->ForwardFrom(LayerIndex(*net, "c4"));
  }
  ExpectSameBlobs(kOutputs);
  // A pass of the input layer alone, then of the rest.
  FillInput();
  for (Net<float>* net : {folded_.get(), plain_.get()}) net->ForwardTo(0);
  ExpectSameBlobs({"c6", "c2"});
  for (Net<float>* net : {folded_.get(), plain_.get()}) net->ForwardFrom(1);
  ExpectSameBlobs(kOutputs);
}

TEST_F(FoldedArenaTest, BlobsWrittenAfterThePassLeaveTheOutputsAsComputed) {
  ForwardBoth();
  FillInput();
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->blob_by_name("c3")->mutable_cpu_data()[17] = 25.0f;
  }
  ExpectSameBlobs({"c6", "c5", "c4", "c2", "c1", "c3", "c7"});
  for (Net<float>* net : {folded_.get(), plain_.get()}) {
    net->ForwardFrom(LayerIndex(*net, "c4"));  // from the written c3
  }
  ExpectSameBlobs(kOutputs);
}

TEST_F(FoldedArenaTest, ANewInputShape) {
  ForwardBoth();
  for (const std::vector<int>& shape :
       std::vector<std::vector<int>>{{1, 16, 20, 18}, {3, 16, 6, 6}, {2, 16, 12, 12}}) {
    for (Net<float>* net : {folded_.get(), plain_.get()}) {
      net->blob_by_name("data")->Reshape(shape);
      net->Reshape();
    }
    FillInput();
    ForwardBoth();
    ExpectSameBlobs({"c7", "c2", "c5", "c1", "c6", "c3", "c4"});
  }
}

// A memory exposed (a numpy view held across passes) takes the values at
// once, at each pass.
TEST_F(FoldedArenaTest, AnExposedOutputTakesItsValuesAtItsPass) {
  SyncedMemory& memory = *folded_->blob_by_name("c2")->data();
  memory.Expose();
  ForwardBoth();
  ExpectSameBlobs(kOutputs);
  FillInput();
  ForwardBoth();
  ExpectSameBlobs({"c2", "c7", "c1"});
  memory.Unexpose();
}

TEST_F(FoldedArenaTest, AnOutputOutlivesItsNet) {
  ForwardBoth();
  const std::shared_ptr<Blob<float>> c2 = folded_->blob_by_name("c2");
  const std::shared_ptr<Blob<float>> c5 = folded_->blob_by_name("c5");
  folded_.reset();
  ExpectSame(*plain_->blob_by_name("c2"), *c2, "c2");
  ExpectSame(*plain_->blob_by_name("c5"), *c5, "c5");
}

// Pointwise convolutions run inside the depthwise ones after them (their
// passes left pending), and c1 and d2 share a slot: after a pass, p1's
// pending pass must restore c1, which d2 overwrote, before it runs.
const char* kPendingOnAShared =
    "name: 'pending' "
    "layer { name: 'input' type: 'Input' top: 'data'"
    "  input_param { shape { dim: 2 dim: 16 dim: 12 dim: 12 } } }"
    "layer { name: 'c1' type: 'Convolution' bottom: 'data' top: 'c1'"
    "  convolution_param { num_output: 32 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.1 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'p1' type: 'Convolution' bottom: 'c1' top: 'p1'"
    "  convolution_param { num_output: 32 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'd1' type: 'Convolution' bottom: 'p1' top: 'd1'"
    "  convolution_param { num_output: 32 group: 32 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'relu_d1' type: 'ReLU' bottom: 'd1' top: 'd1' }"
    "layer { name: 'p2' type: 'Convolution' bottom: 'd1' top: 'p2'"
    "  convolution_param { num_output: 32 kernel_size: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'd2' type: 'Convolution' bottom: 'p2' top: 'd2'"
    "  convolution_param { num_output: 32 group: 32 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' } } }"
    "layer { name: 'c3' type: 'Convolution' bottom: 'd2' top: 'c3'"
    "  convolution_param { num_output: 16 kernel_size: 3 pad: 1 ENGINE"
    "    weight_filler { type: 'gaussian' std: 0.1 } bias_filler { type: 'gaussian' } } }";

TEST(FoldedArenaPendingTest, APendingPassRestoresTheSharedOutputItRead) {
  Context::set_mode(Context::CPU);
  Context::set_random_seed(1729);
  std::unique_ptr<Net<float>> folded = ArenaNetOf(kPendingOnAShared, ""),
                              plain = ArenaNetOf(kPendingOnAShared, "engine: CAFFE");
  ShareWeightsAndInput(folded.get(), plain.get());
  for (int pass = 0; pass < 2; ++pass) {
    folded->Forward();
    plain->Forward();
    if (DnnlActivationBlocks().width != 0) {
      EXPECT_TRUE(Pooled(*folded, "c1"));
      EXPECT_TRUE(Pooled(*folded, "d2"));
    }
    // p1 first: its pass, left pending, reads c1's slot, which d2 wrote
    // last; then the others, d2 after c1 took the slot back.
    for (const char* name : {"p1", "d2", "c1", "p2", "d1", "c3"}) {
      ExpectSame(*plain->blob_by_name(name), *folded->blob_by_name(name), name);
    }
  }
}

}  // namespace
}  // namespace crema
