// Net: building from prototxt (filtering, splits, in-place), the loss and its
// gradients through the whole graph, which layers need backward, shared
// parameters, and weights to and from .caffemodel and HDF5 files.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "crema/filler.hpp"
#include "crema/net.hpp"
#include "crema/util/io.hpp"
#include "crema/util/upgrade_proto.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

// Input (4 x 6 data, 4 labels) -> ip1 (5) -> relu -> ip2 (3) -> softmax loss,
// plus an accuracy layer at TEST.
const char* kSmallNet =
    "name: 'small'"
    "layer { name: 'input' type: 'Input' top: 'data' top: 'label'"
    "  input_param { shape { dim: 4 dim: 6 } shape { dim: 4 } } }"
    "layer { name: 'ip1' type: 'InnerProduct' bottom: 'data' top: 'ip1'"
    "  inner_product_param { num_output: 5 weight_filler { type: 'gaussian' std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'relu1' type: 'ReLU' bottom: 'ip1' top: 'ip1' }"
    "layer { name: 'ip2' type: 'InnerProduct' bottom: 'ip1' top: 'ip2'"
    "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.5 }"
    "    bias_filler { type: 'gaussian' std: 0.5 } } }"
    "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip2' bottom: 'label' top: 'loss' }"
    "layer { name: 'accuracy' type: 'Accuracy' bottom: 'ip2' bottom: 'label' top: 'accuracy'"
    "  include { phase: TEST } }";

template <typename Dtype>
std::unique_ptr<Net<Dtype>> MakeNet(const std::string& text, Phase phase) {
  NetParameter param = ParseNet(text);
  param.mutable_state()->set_phase(phase);
  return std::unique_ptr<Net<Dtype>>(new Net<Dtype>(param));
}

template <typename Dtype>
void FillInputs(Net<Dtype>* net) {
  Context::set_random_seed(1701);
  FillerParameter gaussian;
  gaussian.set_type("gaussian");
  GetFiller<Dtype>(gaussian)->Fill(net->blob_by_name("data").get());
  Dtype* label = net->blob_by_name("label")->mutable_cpu_data();
  for (int i = 0; i < 4; ++i) label[i] = static_cast<Dtype>(i % 3);
}

template <typename TypeParam>
class NetTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(NetTest, TestDtypesAndDevices);

TYPED_TEST(NetTest, BuildsFilteredLayersWithSplits) {
  using Dtype = typename TypeParam::Dtype;
  auto train = MakeNet<Dtype>(kSmallNet, TRAIN);
  EXPECT_EQ(train->name(), "small");
  EXPECT_EQ(train->layer_names(),
            (std::vector<std::string>{"input", "ip1", "relu1", "ip2", "loss"}));
  EXPECT_FALSE(train->has_layer("accuracy"));
  ASSERT_EQ(train->num_outputs(), 1);
  EXPECT_EQ(train->blob_names()[train->output_blob_indices()[0]], "loss");
  EXPECT_EQ(train->num_inputs(), 2);
  // In place: relu1 writes the ip1 blob, so there is no separate relu blob.
  EXPECT_EQ(train->top_vecs()[2][0], train->blob_by_name("ip1").get());

  auto test = MakeNet<Dtype>(kSmallNet, TEST);
  // ip2 and label feed both the loss and the accuracy: each gets a Split.
  EXPECT_TRUE(test->has_layer("accuracy"));
  EXPECT_TRUE(test->has_layer("ip2_ip2_0_split"));
  EXPECT_TRUE(test->has_layer("label_input_1_split"));
  EXPECT_EQ(test->num_outputs(), 2);
}

TYPED_TEST(NetTest, LossIsMeanNegativeLogLikelihood) {
  using Dtype = typename TypeParam::Dtype;
  auto net = MakeNet<Dtype>(kSmallNet, TRAIN);
  FillInputs(net.get());
  Dtype loss = 0;
  net->Forward(&loss);
  const Blob<Dtype>* scores = net->blob_by_name("ip2").get();
  double expected = 0;
  for (int n = 0; n < 4; ++n) {
    const Dtype* s = scores->cpu_data() + 3 * n;
    const double max = std::max({s[0], s[1], s[2]});
    const double z = std::exp(s[0] - max) + std::exp(s[1] - max) + std::exp(s[2] - max);
    expected -= (s[n % 3] - max) - std::log(z);
  }
  expected /= 4;
  EXPECT_NEAR(loss, expected, 1e-5);
  EXPECT_NEAR(net->output_blobs()[0]->cpu_data()[0], expected, 1e-5);
}

// The gradient the net computes for every parameter matches the finite
// difference of the whole net's loss: splits, in-place layers and the
// backward order are all wired right.
// In double precision, where finite differences are accurate enough to tell.
// Bad input that used to abort or pass silently: an input never shaped, and
// a weights file with no layers.
TEST(NetInputErrorsTest, UnshapedInputAndEmptyWeightsAreUserErrors) {
  auto net = MakeNet<float>(
      "name: 'n' layer { name: 'x' type: 'Input' top: 'x' }\n"
      "layer { name: 'r' type: 'ReLU' bottom: 'x' top: 'y' }",
      TEST);
  try {
    net->Forward();
    FAIL() << "an unshaped input ran forward";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input blob 'x' has no shape"), std::string::npos)
        << e.what();
  }
  net->input_blobs()[0]->Reshape(std::vector<int>{2, 3});  // shaped by its caller: runs
  net->Reshape();
  net->Forward();
  const std::string empty = ::testing::TempDir() + "empty_weights.caffemodel";
  WriteFileAtomically(empty, "");
  try {
    net->CopyTrainedLayersFrom(empty);
    FAIL() << "an empty weights file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty_weights.caffemodel: holds no layers"),
              std::string::npos)
        << e.what();
  }
}

// Wiring that Caffe refuses and Crema used to accept without a word.
TEST(NetInputErrorsTest, TwoProducersOfOneTopAndEmptyNetsAreUserErrors) {
  const std::string two_producers = ErrorMessageOf([] {
    MakeNet<float>(
        "layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 2 } } }\n"
        "layer { name: 'a' type: 'ReLU' bottom: 'x' top: 'y' }\n"
        "layer { name: 'b' type: 'Sigmoid' bottom: 'x' top: 'y' }",
        TEST);
  });
  EXPECT_NE(two_producers.find("top blob 'y' is produced by both layer 'a' and layer 'b'"),
            std::string::npos)
      << two_producers;
  // In place (bottom i written as top i) stays allowed.
  MakeNet<float>(
      "layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 2 } } }\n"
      "layer { name: 'a' type: 'ReLU' bottom: 'x' top: 'x' }",
      TEST);
  const std::string empty = ErrorMessageOf([] { MakeNet<float>("name: 'e'", TEST); });
  EXPECT_NE(empty.find("net 'e' has no layers"), std::string::npos) << empty;
  const std::string no_test_layers = ErrorMessageOf([] {
    MakeNet<float>(
        "name: 't' layer { name: 'in' type: 'Input' top: 'x' include { phase: TRAIN } "
        "input_param { shape { dim: 2 } } }",
        TEST);
  });
  EXPECT_NE(no_test_layers.find("none of its 1 layers is in the TEST phase"), std::string::npos)
      << no_test_layers;
  const std::string empty_file = ::testing::TempDir() + "empty_net.prototxt";
  WriteFileAtomically(empty_file, "");
  const std::string from_file = ErrorMessageOf([&] { Net<float> net(empty_file, TEST); });
  EXPECT_NE(from_file.find("has no layers"), std::string::npos) << from_file;
}

// A batch of 0 items (dim: 0) runs through, forward and backward, as an
// empty computation (found by fuzzing: a bias multiplier never shaped).
TEST(NetInputErrorsTest, EmptyBatchRunsThrough) {
  NetParameter param = ParseNet(
      "force_backward: true "
      "layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 0 dim: 2 dim: 6 "
      "dim: 6 } } }"
      "layer { name: 'conv' type: 'Convolution' bottom: 'x' top: 'c' convolution_param { "
      "num_output: 3 kernel_size: 3 pad: 1 } }"
      "layer { name: 'pool' type: 'Pooling' bottom: 'c' top: 'p' pooling_param { pool: MAX "
      "kernel_size: 2 stride: 2 } }"
      "layer { name: 'relu' type: 'ReLU' bottom: 'p' top: 'p' }"
      "layer { name: 'lrn' type: 'LRN' bottom: 'p' top: 'n' }"
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'n' top: 'i' inner_product_param { "
      "num_output: 4 } }"
      "layer { name: 'prob' type: 'Softmax' bottom: 'i' top: 'prob' }");
  param.mutable_state()->set_phase(TRAIN);
  Net<float> net(param);
  net.Forward();
  net.Backward();
  EXPECT_EQ(net.blob_by_name("prob")->shape(), (std::vector<int>{0, 4}));
}

// The Python API passes layer indices straight through.
TEST(NetInputErrorsTest, PassesOverLayersOutsideTheNetAreUserErrors) {
  auto net = MakeNet<float>(kSmallNet, TEST);
  const std::string forward = ErrorMessageOf([&] { net->ForwardFromTo(0, 99); });
  EXPECT_NE(
      forward.find("net 'small': forward over layers 0..99 asked for; the net has layers 0.."),
      std::string::npos)
      << forward;
  EXPECT_THROW(net->BackwardFromTo(99, 0), Error);
  EXPECT_THROW(net->BackwardFromTo(2, -1), Error);
}

// Weights that match no layer would leave the net at its initialisation;
// weights for some layers (fine-tuning) are copied and said.
TEST(NetInputErrorsTest, WeightsSharingNoLayerAreRefusedAndPartialCopiesSaid) {
  auto source = MakeNet<float>(kSmallNet, TEST);
  NetParameter weights;
  source->ToProto(&weights);
  for (LayerParameter& layer : *weights.mutable_layer()) layer.set_name("other_" + layer.name());
  const std::string unrelated = ::testing::TempDir() + "unrelated.caffemodel";
  WriteProtoToBinaryFile(weights, unrelated);
  auto net = MakeNet<float>(kSmallNet, TEST);
  const std::string message = ErrorMessageOf([&] { net->CopyTrainedLayersFrom(unrelated); });
  EXPECT_NE(message.find("unrelated.caffemodel: shares no layer name with net 'small'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("other_ip1"), std::string::npos) << message;
  EXPECT_NE(message.find("the net's layers with parameters: ip1, ip2"), std::string::npos)
      << message;
  // Only ip1 in the file: ip1 copied, ip2 kept.
  source->ToProto(&weights);
  weights.mutable_layer()->DeleteSubrange(3, weights.layer_size() - 3);  // input, ip1, relu1
  const std::string partial = ::testing::TempDir() + "partial.caffemodel";
  WriteProtoToBinaryFile(weights, partial);
  const float ip2_before = net->layer_by_name("ip2")->blobs()[0]->cpu_data()[0];
  net->CopyTrainedLayersFrom(partial);
  EXPECT_EQ(net->layer_by_name("ip1")->blobs()[0]->cpu_data()[0],
            source->layer_by_name("ip1")->blobs()[0]->cpu_data()[0]);
  EXPECT_EQ(net->layer_by_name("ip2")->blobs()[0]->cpu_data()[0], ip2_before);
  // The same for HDF5 weights, and an HDF5 file with no layers at all.
  const std::string h5 = ::testing::TempDir() + "unrelated.caffemodel.h5";
  auto renamed = MakeNet<float>(
      "name: 'r' layer { name: 'in' type: 'Input' top: 'data' "
      "input_param { shape { dim: 4 dim: 6 } } }"
      "layer { name: 'fc' type: 'InnerProduct' bottom: 'data' top: 'fc' "
      "inner_product_param { num_output: 5 } }",
      TEST);
  renamed->ToHDF5(h5);
  const std::string h5_message = ErrorMessageOf([&] { net->CopyTrainedLayersFrom(h5); });
  EXPECT_NE(h5_message.find("shares no layer name"), std::string::npos) << h5_message;
  const std::string no_layers_h5 = ::testing::TempDir() + "no_layers.caffemodel.h5";
  auto no_params = MakeNet<float>(
      "name: 'p' layer { name: 'in' type: 'Input' top: 'data' "
      "input_param { shape { dim: 4 dim: 6 } } }",
      TEST);
  no_params->ToHDF5(no_layers_h5);  // /data with one empty group: 'in'
  const std::string h5_empty = ErrorMessageOf([&] { net->CopyTrainedLayersFrom(no_layers_h5); });
  EXPECT_NE(h5_empty.find("shares no layer name"), std::string::npos) << h5_empty;
}

// The net's compute_precision reaches every layer that gives none.
TEST(NetInputErrorsTest, ComputePrecisionReachesLayersWithoutTheirOwn) {
  auto net = MakeNet<float>(
      "name: 'p' compute_precision: BF16 "
      "layer { name: 'in' type: 'Input' top: 'data' input_param { shape { dim: 2 dim: 3 } } }"
      "layer { name: 'fc' type: 'InnerProduct' bottom: 'data' top: 'fc' "
      "inner_product_param { num_output: 2 } }"
      "layer { name: 'fc2' type: 'InnerProduct' bottom: 'fc' top: 'fc2' compute_precision: FLOAT "
      "inner_product_param { num_output: 2 } }",
      TEST);
  EXPECT_EQ(net->layer_by_name("in")->layer_param().compute_precision(), BF16);
  EXPECT_EQ(net->layer_by_name("fc")->layer_param().compute_precision(), BF16);
  EXPECT_EQ(net->layer_by_name("fc2")->layer_param().compute_precision(), FLOAT);
}

// The net's convolution_algorithm reaches every layer that gives none.
TEST(NetInputErrorsTest, ConvolutionAlgorithmReachesLayersWithoutTheirOwn) {
  auto net = MakeNet<float>(
      "name: 'p' convolution_algorithm: WINOGRAD "
      "layer { name: 'in' type: 'Input' top: 'data' "
      "input_param { shape { dim: 1 dim: 2 dim: 5 dim: 5 } } }"
      "layer { name: 'c' type: 'Convolution' bottom: 'data' top: 'c' "
      "convolution_param { num_output: 2 kernel_size: 3 } }"
      "layer { name: 'd' type: 'Convolution' bottom: 'c' top: 'd' convolution_algorithm: DIRECT "
      "convolution_param { num_output: 2 kernel_size: 3 } }",
      TEST);
  EXPECT_EQ(net->layer_by_name("c")->layer_param().convolution_algorithm(), WINOGRAD);
  EXPECT_EQ(net->layer_by_name("d")->layer_param().convolution_algorithm(), DIRECT);
}

// HDF5 weights files on which libhdf5 itself faults (found by fuzzing: a
// read through a null pointer inside the library, which crashes in every
// build; the overflows the sanitizer tree also replays pass silently in a
// release build) are an Error naming the file, and the process goes on: the
// file is read in a child process.
TEST(NetInputErrorsTest, WeightsThatCrashLibhdf5AreAnErrorNamingTheFile) {
  auto net = MakeNet<float>(
      "name: 'small' layer { name: 'data' type: 'Input' top: 'data' "
      "input_param { shape { dim: 2 dim: 1 dim: 6 dim: 6 } } }"
      "layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1' "
      "convolution_param { num_output: 2 kernel_size: 3 } }"
      "layer { name: 'bn1' type: 'BatchNorm' bottom: 'conv1' top: 'conv1' }"
      "layer { name: 'ip1' type: 'InnerProduct' bottom: 'conv1' top: 'ip1' "
      "inner_product_param { num_output: 3 } }",
      TEST);
  const std::string folder = SourceDir() + "/tests/fuzz/regressions/weights_h5/";
  for (const char* name :
       {"libhdf5_memcpy_from_null_in_contig_read.h5", "libhdf5_null_read_in_accum_read.h5"}) {
    const std::string path = folder + name;
    ASSERT_EQ(access(path.c_str(), R_OK), 0) << path;
    const std::string message = ErrorMessageOf([&] { net->CopyTrainedLayersFrom(path); });
    // A signal, or under a sanitizer its report's exit status.
    EXPECT_EQ(message.rfind(path + ": the reader ", 0), 0u) << message;
    EXPECT_NE(message.find("on this file"), std::string::npos) << message;
  }
  net->Forward();  // the net is intact
}

// A blob larger than the thread's allocation limit is a MemoryError naming
// the layer, its tops and the bytes asked for (the same path as a GPU or
// host running out of memory).
TEST(NetInputErrorsTest, MemoryExhaustionNamesTheLayer) {
  auto net = MakeNet<float>(kSmallNet, TEST);
  const size_t before = Context::max_allocation();
  Context::set_max_allocation(64);  // 16 floats: ip1's 4 x 5 top needs 80 bytes
  const std::string message = ErrorMessageOf([&] { net->Forward(); });
  Context::set_max_allocation(before);
  EXPECT_NE(message.find("layer 'ip1' (InnerProduct), forward pass"), std::string::npos) << message;
  EXPECT_NE(message.find("tops 'ip1' 4 5 (20): cannot allocate 80 bytes of host memory: above "
                         "this thread's allocation limit of 64 bytes"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("reduce the batch size"), std::string::npos) << message;
  // A host allocation that cannot succeed (1 PiB) is the same error, not an abort.
  SyncedMemory huge(size_t(1) << 50);
  EXPECT_THROW(huge.cpu_data(), MemoryError);
}

TEST(NetGradientTest, ParameterGradientsMatchFiniteDifferences) {
  using Dtype = double;
  auto net = MakeNet<Dtype>(kSmallNet, TEST);  // TEST has the splits
  FillInputs(net.get());
  net->ClearParamDiffs();
  net->ForwardBackward();
  const double step = 1e-5;
  for (Blob<Dtype>* param : net->learnable_params()) {
    std::vector<Dtype> analytic(param->cpu_diff(), param->cpu_diff() + param->count());
    for (int i = 0; i < param->count(); ++i) {
      const Dtype value = param->cpu_data()[i];
      Dtype plus, minus;
      param->mutable_cpu_data()[i] = value + step;
      net->Forward(&plus);
      param->mutable_cpu_data()[i] = value - step;
      net->Forward(&minus);
      param->mutable_cpu_data()[i] = value;
      EXPECT_NEAR(analytic[i], (plus - minus) / (2 * step), 1e-6) << "element " << i;
    }
  }
}

// Running the layers in pieces (as Python's forward(start=, end=) and
// backward(start=, end=) do) gives what one whole pass gives.
TEST(NetPiecesTest, ForwardAndBackwardInPiecesMatchWholePasses) {
  using Dtype = double;
  auto net = MakeNet<Dtype>(kSmallNet, TRAIN);
  FillInputs(net.get());
  net->ClearParamDiffs();
  const Dtype whole_loss = net->ForwardBackward();
  std::vector<std::vector<Dtype>> whole;
  for (const Blob<Dtype>* param : net->learnable_params()) {
    whole.emplace_back(param->cpu_diff(), param->cpu_diff() + param->count());
  }
  const int last = static_cast<int>(net->layers().size()) - 1;
  const int middle = last / 2;
  net->ClearParamDiffs();
  const Dtype pieces_loss = net->ForwardTo(middle) + net->ForwardFrom(middle + 1);
  net->BackwardFrom(last);  // the whole backward, from the last layer down...
  net->ClearParamDiffs();
  net->BackwardTo(middle + 1);  // ...then again in two pieces
  net->BackwardFromTo(middle, 0);
  EXPECT_EQ(pieces_loss, whole_loss);
  ASSERT_EQ(net->learnable_params().size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    const Blob<Dtype>* param = net->learnable_params()[i];
    EXPECT_EQ(std::vector<Dtype>(param->cpu_diff(), param->cpu_diff() + param->count()), whole[i])
        << "parameter " << i;
  }
  // The Input layer alone adds no loss.
  EXPECT_EQ(net->ForwardFromTo(0, 0), Dtype(0));
}

TYPED_TEST(NetTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  auto net = MakeNet<Dtype>(kSmallNet, TRAIN);
  FillInputs(net.get());
  net->ClearParamDiffs();
  const Dtype loss = net->ForwardBackward();
  const Dtype diff = net->learnable_params()[0]->asum_diff();
  std::string weighted(kSmallNet);
  weighted.replace(weighted.find("top: 'loss' }"), 13, "top: 'loss' loss_weight: 2 }");
  auto net2 = MakeNet<Dtype>(weighted, TRAIN);
  FillInputs(net2.get());
  net2->CopyTrainedLayersFrom([&] {
    NetParameter p;
    net->ToProto(&p);
    return p;
  }());
  net2->ClearParamDiffs();
  EXPECT_NEAR(net2->ForwardBackward(), 2 * loss, 1e-5);
  EXPECT_NEAR(net2->learnable_params()[0]->asum_diff(), 2 * diff, 1e-4);
}

TYPED_TEST(NetTest, BackwardOnlyWhereSomethingLearns) {
  using Dtype = typename TypeParam::Dtype;
  std::string frozen(kSmallNet);
  // ip1 learns nothing: no backward for it, and none into the input.
  frozen.replace(frozen.find("top: 'ip1'"), 10,
                 "top: 'ip1' param { lr_mult: 0 } param { lr_mult: 0 }");
  auto net = MakeNet<Dtype>(frozen, TRAIN);
  EXPECT_FALSE(net->layer_need_backward()[0]);  // input
  EXPECT_FALSE(net->layer_need_backward()[1]);  // ip1, frozen
  EXPECT_TRUE(net->layer_need_backward()[3]);   // ip2
  EXPECT_EQ(net->learnable_params().size(), 4u);
  EXPECT_EQ(net->params_lr()[0], 0.f);
  FillInputs(net.get());
  net->ClearParamDiffs();
  net->ForwardBackward();
  EXPECT_EQ(net->learnable_params()[0]->asum_diff(), Dtype(0));
  EXPECT_GT(net->learnable_params()[2]->asum_diff(), Dtype(0));
}

TYPED_TEST(NetTest, ForceBackwardReachesTheInput) {
  using Dtype = typename TypeParam::Dtype;
  auto plain = MakeNet<Dtype>(kSmallNet, TRAIN);
  EXPECT_FALSE(plain->bottom_need_backward()[1][0]);  // ip1 needs no gradient of data
  auto forced = MakeNet<Dtype>(std::string("force_backward: true ") + kSmallNet, TRAIN);
  EXPECT_TRUE(forced->bottom_need_backward()[1][0]);
  EXPECT_FALSE(forced->bottom_need_backward()[4][1]);  // never into labels
  FillInputs(forced.get());
  forced->ForwardBackward();
  EXPECT_GT(forced->blob_by_name("data")->asum_diff(), Dtype(0));
}

TYPED_TEST(NetTest, SharedParametersUseOneBlob) {
  using Dtype = typename TypeParam::Dtype;
  const std::string text =
      "layer { name: 'input' type: 'Input' top: 'a' top: 'b'"
      "  input_param { shape { dim: 2 dim: 3 } } }"
      "layer { name: 'ip_a' type: 'InnerProduct' bottom: 'a' top: 'ya'"
      "  param { name: 'w' } inner_product_param { num_output: 2 bias_term: false"
      "  weight_filler { type: 'gaussian' } } }"
      "layer { name: 'ip_b' type: 'InnerProduct' bottom: 'b' top: 'yb'"
      "  param { name: 'w' } inner_product_param { num_output: 2 bias_term: false"
      "  weight_filler { type: 'gaussian' } } }"
      "layer { name: 'loss' type: 'EuclideanLoss' bottom: 'ya' bottom: 'yb' }";
  auto net = MakeNet<Dtype>(text, TRAIN);
  ASSERT_EQ(net->params().size(), 2u);
  EXPECT_EQ(net->learnable_params().size(), 1u);
  EXPECT_EQ(net->param_owners()[1], 0);
  EXPECT_EQ(net->params()[0]->cpu_data(), net->params()[1]->cpu_data());
  EXPECT_EQ(net->params()[0]->cpu_diff(), net->params()[1]->cpu_diff());

  std::string mismatched(text);
  mismatched.replace(mismatched.rfind("num_output: 2"), 13, "num_output: 4");
  try {
    MakeNet<Dtype>(mismatched, TRAIN);
    FAIL() << "a shared parameter of another shape must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ip_b"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
  }
}

TYPED_TEST(NetTest, WeightsRoundTripThroughCaffemodelAndHdf5) {
  using Dtype = typename TypeParam::Dtype;
  auto net = MakeNet<Dtype>(kSmallNet, TRAIN);
  FillInputs(net.get());
  Dtype loss = 0;
  net->Forward(&loss);
  char dir_pattern[] = "/tmp/crema_net_XXXXXX";
  ASSERT_NE(mkdtemp(dir_pattern), nullptr);
  const std::string dir = dir_pattern;
  NetParameter trained;
  net->ToProto(&trained);
  WriteProtoToBinaryFile(trained, dir + "/small.caffemodel");
  net->ToHDF5(dir + "/small.caffemodel.h5");
  for (const std::string file : {"/small.caffemodel", "/small.caffemodel.h5"}) {
    SCOPED_TRACE(file);
    Context::set_random_seed(99);  // different initial weights
    auto copy = MakeNet<Dtype>(kSmallNet, TRAIN);
    copy->CopyTrainedLayersFrom(dir + file);
    FillInputs(copy.get());
    Dtype copy_loss = 0;
    copy->Forward(&copy_loss);
    EXPECT_EQ(copy_loss, loss);
  }
  std::system(("rm -rf " + dir).c_str());
}

// A .caffemodel as NVCaffe 0.17 writes it by default: every blob's values in
// raw_data, typed FLOAT16 (an fp16-trained net) or FLOAT. The weights here
// are multiples of 1/8 below 16, which binary16 holds exactly, so the loaded
// net must hold exactly them and compute exactly the loss of the source.
TYPED_TEST(NetTest, WeightsLoadFromNvcaffeRawData) {
  using Dtype = typename TypeParam::Dtype;
  auto source = MakeNet<Dtype>(kSmallNet, TRAIN);
  for (const auto& blob : source->learnable_params()) {
    Dtype* data = blob->mutable_cpu_data();
    for (int i = 0; i < blob->count(); ++i) data[i] = Dtype((i * 37 % 29) - 14) / 8;
  }
  FillInputs(source.get());
  Dtype loss = 0;
  source->Forward(&loss);
  NetParameter trained;
  source->ToProto(&trained);
  for (const Type type : {FLOAT16, FLOAT}) {
    NetParameter nvcaffe = trained;
    for (LayerParameter& layer : *nvcaffe.mutable_layer()) {
      for (BlobProto& blob : *layer.mutable_blobs()) {
        std::string bytes;
        const int count = blob.data_size() + blob.double_data_size();  // one of them is empty
        for (int i = 0; i < count; ++i) {
          const float value =
              blob.data_size() > 0 ? blob.data(i) : static_cast<float>(blob.double_data(i));
          if (type == FLOAT) {
            bytes.append(reinterpret_cast<const char*>(&value), 4);
            continue;
          }
          // value = k / 8 with |k| < 128: sign, exponent and 10-bit mantissa.
          uint16_t half = value < 0 ? 0x8000 : 0;
          const float magnitude = std::fabs(value);
          if (magnitude > 0) {
            int exponent = 0;
            const float fraction = std::frexp(magnitude, &exponent);  // in [0.5, 1)
            half |= static_cast<uint16_t>((exponent - 1 + 15) << 10);
            half |= static_cast<uint16_t>((fraction * 2 - 1) * 1024);
          }
          bytes.append(reinterpret_cast<const char*>(&half), 2);
        }
        blob.clear_data();
        blob.clear_double_data();
        blob.set_raw_data_type(type);
        blob.set_raw_data(bytes);
      }
    }
    const std::string file = ::testing::TempDir() + "nvcaffe_" + Type_Name(type) + ".caffemodel";
    WriteProtoToBinaryFile(nvcaffe, file);
    Context::set_random_seed(99);
    auto copy = MakeNet<Dtype>(kSmallNet, TRAIN);
    copy->CopyTrainedLayersFrom(file);
    for (size_t j = 0; j < copy->learnable_params().size(); ++j) {
      const Blob<Dtype>& ours = *copy->learnable_params()[j];
      const Blob<Dtype>& theirs = *source->learnable_params()[j];
      for (int i = 0; i < ours.count(); ++i) {
        ASSERT_EQ(ours.cpu_data()[i], theirs.cpu_data()[i]) << Type_Name(type) << " " << j;
      }
    }
    FillInputs(copy.get());
    Dtype copy_loss = 0;
    copy->Forward(&copy_loss);
    EXPECT_EQ(copy_loss, loss) << Type_Name(type);
  }
}

// A .caffemodel a fork wrote carries its layer parameters at the fork's
// numbers, some of which are other fields here (NVCaffe's forward_type, an
// enum at 145, is BVLC's parameter_param, a message): such a layer still
// decodes (a field of the other wire type is kept aside, as protobuf does)
// and its weights load by name.
TEST(NetForkFilesTest, ForkWrittenModelsLoadByName) {
  auto source = MakeNet<float>(kSmallNet, TEST);
  NetParameter trained;
  source->ToProto(&trained);
  std::string file;
  for (const LayerParameter& layer : trained.layer()) {
    std::string bytes = layer.SerializeAsString();
    bytes += std::string("\x88\x09\x02", 3);  // field 145, varint 2: NVCaffe's FLOAT16
    bytes += std::string("\x98\x09\x01", 3);  // field 147, varint 1: its forward_math FLOAT
    google::protobuf::io::StringOutputStream out(&file);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.WriteTag(100 << 3 | 2);  // NetParameter.layer
    coded.WriteVarint32(static_cast<uint32_t>(bytes.size()));
    coded.WriteRaw(bytes.data(), static_cast<int>(bytes.size()));
  }
  NetParameter forked;
  ASSERT_TRUE(forked.ParseFromString(file));
  ASSERT_EQ(forked.layer_size(), trained.layer_size());
  EXPECT_FALSE(forked.layer(1).has_parameter_param());
  Context::set_random_seed(99);
  auto copy = MakeNet<float>(kSmallNet, TEST);
  copy->CopyTrainedLayersFrom(forked);
  EXPECT_EQ(copy->layer_by_name("ip2")->blobs()[0]->cpu_data()[3],
            source->layer_by_name("ip2")->blobs()[0]->cpu_data()[3]);
}

TYPED_TEST(NetTest, MisshapedTrainedLayerNamesLayerAndShapes) {
  using Dtype = typename TypeParam::Dtype;
  auto net = MakeNet<Dtype>(kSmallNet, TRAIN);
  NetParameter trained;
  net->ToProto(&trained);
  std::string wider(kSmallNet);
  wider.replace(wider.find("num_output: 5"), 13, "num_output: 7");
  auto other = MakeNet<Dtype>(wider, TRAIN);
  try {
    other->CopyTrainedLayersFrom(trained);
    FAIL() << "a mis-shaped layer must be refused";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("ip1"), std::string::npos) << message;
    EXPECT_NE(message.find("7 6"), std::string::npos) << message;
    EXPECT_NE(message.find("5 6"), std::string::npos) << message;
  }
}

TEST(NetErrorTest, UnknownBottomAndTypeAreUserErrors) {
  auto message_of = [](const std::string& text) -> std::string {
    try {
      MakeNet<float>(text, TRAIN);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string input =
      "layer { name: 'input' type: 'Input' top: 'data' input_param { shape { dim: 1 } } }";
  EXPECT_NE(
      message_of(input + "layer { name: 'r' type: 'ReLU' bottom: 'dta' top: 'r' }").find("'dta'"),
      std::string::npos);
  EXPECT_NE(
      message_of(input + "layer { name: 'r' type: 'ReLUU' bottom: 'data' top: 'r' }").find("ReLUU"),
      std::string::npos);
}

// Two layers of one name, as BVLC Caffe accepts them (MobileNetV2-SSDLite's
// published deploy file has two parameterless Slice layers named 'slice'):
// the net builds, layer_by_name finds the last, and weights copied by name
// go to the first, as Caffe sends them; the second keeps its initial values.
TEST(NetNamesTest, DuplicateNamesBuildAndWeightsGoToTheFirst) {
  const std::string net_text =
      "name: 'twins' layer { name: 'input' type: 'Input' top: 'data' "
      "  input_param { shape { dim: 2 dim: 3 } } }"
      "layer { name: 'fc' type: 'InnerProduct' bottom: 'data' top: 'a' "
      "  inner_product_param { num_output: 3 weight_filler { type: 'gaussian' } } }"
      "layer { name: 'fc' type: 'InnerProduct' bottom: 'a' top: 'b' "
      "  inner_product_param { num_output: 2 weight_filler { type: 'gaussian' } } }";
  auto source = MakeNet<float>(net_text, TEST);
  ASSERT_EQ(source->layers().size(), 3u);
  EXPECT_EQ(source->layer_by_name("fc"), source->layers()[2]);
  NetParameter weights;
  source->ToProto(&weights);
  Context::set_random_seed(5);
  auto copy = MakeNet<float>(net_text, TEST);
  const float second_before = copy->layers()[2]->blobs()[0]->cpu_data()[0];
  // The file holds both 'fc' layers; each copies into the first 'fc' of the
  // net (Caffe's search by name), so the second file layer, of another
  // shape, is the one refused. With only the first in the file, it loads.
  weights.mutable_layer()->RemoveLast();
  copy->CopyTrainedLayersFrom(weights);
  EXPECT_EQ(copy->layers()[1]->blobs()[0]->cpu_data()[0],
            source->layers()[1]->blobs()[0]->cpu_data()[0]);
  EXPECT_EQ(copy->layers()[2]->blobs()[0]->cpu_data()[0], second_before);
}

// What BVLC Caffe's reader accepts in a file, Crema's does: a V1 net with
// blobs_lr, weight_decay and Concat's concat_dim, CRLF line ends, comments
// after fields and on lines of their own, single-quoted strings. The V1
// multipliers become param specs and concat_dim the concatenation axis.
TEST(NetLeniencyTest, OldCaffeFilesAsWrittenParse) {
  const std::string text =
      "name: 'lenient'  # a comment after a field\r\n"
      "# a comment line\r\n"
      "input: \"data\"\r\ninput_dim: 2\r\ninput_dim: 3\r\ninput_dim: 4\r\ninput_dim: 4\r\n"
      "layers {\r\n  name: 'conv'  type: CONVOLUTION  bottom: 'data'  top: 'conv'\r\n"
      "  blobs_lr: 1  blobs_lr: 2  weight_decay: 1  weight_decay: 0\r\n"
      "  convolution_param { num_output: 2 kernel_size: 1 }  # trailing\r\n}\r\n"
      "layers { name: 'both' type: CONCAT bottom: 'conv' bottom: 'data' top: 'both'\r\n"
      "  concat_param { concat_dim: 1 } }\r\n";
  const std::string file = ::testing::TempDir() + "lenient.prototxt";
  {
    std::ofstream out(file, std::ios::binary);
    out << text;
  }
  NetParameter param;
  ReadNetParamsFromTextFile(file, &param);
  param.mutable_state()->set_phase(TEST);
  Net<float> net(param);
  const auto& conv = net.layer_by_name("conv")->layer_param();
  ASSERT_EQ(conv.param_size(), 2);
  EXPECT_EQ(conv.param(1).lr_mult(), 2);
  EXPECT_EQ(conv.param(1).decay_mult(), 0);
  EXPECT_EQ(net.blob_by_name("both")->shape(), (std::vector<int>{2, 5, 4, 4}));
}

TEST(NetFilterTest, StateRules) {
  NetState state;
  state.set_phase(TRAIN);
  state.set_level(2);
  state.add_stage("deploy");
  NetStateRule rule;
  EXPECT_TRUE(Net<float>::StateMeetsRule(state, rule, "l"));
  rule.set_phase(TEST);
  EXPECT_FALSE(Net<float>::StateMeetsRule(state, rule, "l"));
  rule.Clear();
  rule.set_min_level(3);
  EXPECT_FALSE(Net<float>::StateMeetsRule(state, rule, "l"));
  rule.Clear();
  rule.set_max_level(2);
  EXPECT_TRUE(Net<float>::StateMeetsRule(state, rule, "l"));
  rule.Clear();
  rule.add_stage("deploy");
  EXPECT_TRUE(Net<float>::StateMeetsRule(state, rule, "l"));
  rule.add_stage("other");
  EXPECT_FALSE(Net<float>::StateMeetsRule(state, rule, "l"));
  rule.Clear();
  rule.add_not_stage("deploy");
  EXPECT_FALSE(Net<float>::StateMeetsRule(state, rule, "l"));
}

TEST(NetFilterTest, IncludeAndExclude) {
  NetParameter param = ParseNet(
      "state { phase: TEST stage: 'b' }"
      "layer { name: 'always' }"
      "layer { name: 'train_only' include { phase: TRAIN } }"
      "layer { name: 'test_only' include { phase: TEST } }"
      "layer { name: 'not_test' exclude { phase: TEST } }"
      "layer { name: 'stage_a' include { stage: 'a' } }"
      "layer { name: 'a_or_b' include { stage: 'a' } include { stage: 'b' } }");
  NetParameter filtered;
  Net<float>::FilterNet(param, &filtered);
  std::vector<std::string> names;
  for (const auto& layer : filtered.layer()) names.push_back(layer.name());
  EXPECT_EQ(names, (std::vector<std::string>{"always", "test_only", "a_or_b"}));
}

}  // namespace
}  // namespace crema

namespace crema {
namespace {

TEST(NetBackwardTest, ExplicitPropagateDownForcesTheGradient) {
  std::string text(kSmallNet);
  text.replace(text.find("bottom: 'data' top: 'ip1'"), 25,
               "bottom: 'data' top: 'ip1' propagate_down: true");
  auto net = MakeNet<float>(text, TRAIN);
  EXPECT_TRUE(net->bottom_need_backward()[1][0]);  // ip1 computes the gradient of data
  std::string off(kSmallNet);
  off.replace(off.find("bottom: 'ip2' bottom: 'label' top: 'loss'"), 41,
              "bottom: 'ip2' bottom: 'label' top: 'loss' propagate_down: false "
              "propagate_down: false");
  auto frozen = MakeNet<float>(off, TRAIN);
  EXPECT_FALSE(frozen->bottom_need_backward()[4][0]);
  EXPECT_FALSE(frozen->layer_need_backward()[3]);  // nothing reaches ip2 from the loss
}

}  // namespace
}  // namespace crema
