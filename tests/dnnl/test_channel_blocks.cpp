// Activations between float nchw and nChw16c (channel_blocks.hpp, and
// DnnlArgument's In and Finish where a convolution's arguments take that
// path): the same bits as oneDNN's own reorders, for every spatial size
// (whole 16-position tiles and the positions after them), batch and channel
// count, and in bf16 for the values whose rounding is delicate (ties, the
// largest floats, infinities, NaN, denormals).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "crema/dnnl/channel_blocks.hpp"
#include "crema/dnnl/dnnl.hpp"

namespace crema {
namespace {

using Dims = dnnl::memory::dims;
using Tag = dnnl::memory::format_tag;
using Type = dnnl::memory::data_type;

size_t Count(const Dims& dims) { return dims[0] * dims[1] * dims[2] * dims[3]; }

// Random values with the delicate ones mixed in.
std::vector<float> Values(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 3.f);
  const float specials[] = {0.f,
                            -0.f,
                            1.f + 1.f / 256,  // a tie: rounds to even (down)
                            1.f + 3.f / 256,  // a tie: rounds to even (up)
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = i % 7 == 3 ? specials[(i / 7) % (sizeof(specials) / sizeof(float))] : normal(rng);
  }
  return values;
}

// What oneDNN's reorder makes of `from` (layout from_tag, type from_type).
template <typename To>
std::vector<To> OneDnnReorder(const void* from, const Dims& dims, Type from_type, Tag from_tag,
                              Type to_type, Tag to_tag) {
  const dnnl::memory::desc from_desc(dims, from_type, from_tag), to_desc(dims, to_type, to_tag);
  std::vector<To> out(to_desc.get_size() / sizeof(To));
  dnnl::memory source(from_desc, DnnlEngine(), const_cast<void*>(from));
  dnnl::memory target(to_desc, DnnlEngine(), out.data());
  DnnlRun(dnnl::reorder(source, target), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, target}});
  return out;
}

// Bit for bit, where two NaNs count as equal (their payloads may differ).
template <typename T>
void ExpectSameBits(const std::vector<T>& expected, const T* actual, const Dims& dims) {
  int differing = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const bool both_nan = actual[i] != actual[i] && expected[i] != expected[i];
    if (std::memcmp(&expected[i], &actual[i], sizeof(T)) != 0 && !both_nan && differing++ < 5) {
      ADD_FAILURE() << "element " << i << " of " << dims[0] << "x" << dims[1] << "x" << dims[2]
                    << "x" << dims[3] << ": " << actual[i] << ", oneDNN " << expected[i];
    }
  }
  EXPECT_EQ(differing, 0);
}

// bf16 as 16-bit patterns: NaN where the exponent is all ones and the
// mantissa is not zero.
void ExpectSameBf16(const std::vector<uint16_t>& expected, const uint16_t* actual,
                    const Dims& dims) {
  const auto nan = [](uint16_t v) { return (v & 0x7fff) > 0x7f80; };
  int differing = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i] && !(nan(expected[i]) && nan(actual[i])) && differing++ < 5) {
      ADD_FAILURE() << "element " << i << " of " << dims[0] << "x" << dims[1] << "x" << dims[2]
                    << "x" << dims[3] << ": 0x" << std::hex << actual[i] << ", oneDNN 0x"
                    << expected[i];
    }
  }
  EXPECT_EQ(differing, 0);
}

class ChannelBlocksTest : public ::testing::TestWithParam<Dims> {
 protected:
  void SetUp() override {
    if (!ChannelBlocksSupported()) GTEST_SKIP() << "this CPU has no AVX-512: reorders run";
  }
};

TEST_P(ChannelBlocksTest, FloatBlocksMatchOneDnnReorder) {
  const Dims dims = GetParam();
  const std::vector<float> plain = Values(Count(dims), 5);
  std::vector<float> blocks(plain.size()), back(plain.size());
  PlainToChannelBlocks(plain.data(), blocks.data(), dims[0], dims[1], dims[2] * dims[3]);
  ExpectSameBits(
      OneDnnReorder<float>(plain.data(), dims, Type::f32, Tag::abcd, Type::f32, Tag::aBcd16b),
      blocks.data(), dims);
  ChannelBlocksToPlain(blocks.data(), back.data(), dims[0], dims[1], dims[2] * dims[3]);
  ExpectSameBits(plain, back.data(), dims);
}

TEST_P(ChannelBlocksTest, Bf16BlocksMatchOneDnnReorder) {
  if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: no bf16 conversion";
  const Dims dims = GetParam();
  const std::vector<float> plain = Values(Count(dims), 7);
  std::vector<uint16_t> blocks(plain.size());
  PlainToChannelBlocksBf16(plain.data(), blocks.data(), dims[0], dims[1], dims[2] * dims[3]);
  ExpectSameBf16(
      OneDnnReorder<uint16_t>(plain.data(), dims, Type::f32, Tag::abcd, Type::bf16, Tag::aBcd16b),
      blocks.data(), dims);
}

// The arguments of a primitive: the moves above where they apply (a multiple
// of 16 channels), oneDNN's reorders elsewhere; the same bits either way.
TEST_P(ChannelBlocksTest, ArgumentsMatchOneDnnReorders) {
  for (const dnnl::memory::dim channels : {GetParam()[1], GetParam()[1] + 8}) {
    Dims dims = GetParam();
    dims[1] = channels;
    const std::vector<float> plain = Values(Count(dims), 11);
    const std::vector<int> shape(dims.begin(), dims.end());
    const DnnlArgument floats(PlainDesc(shape), dnnl::memory::desc(dims, Type::f32, Tag::aBcd16b));
    const dnnl::memory in = floats.In(plain.data());
    ExpectSameBits(
        OneDnnReorder<float>(plain.data(), dims, Type::f32, Tag::abcd, Type::f32, Tag::aBcd16b),
        static_cast<const float*>(in.get_data_handle()), dims);
    std::vector<float> back(plain.size());
    floats.Finish(back.data());  // the blocks In left in the argument's buffer
    ExpectSameBits(plain, back.data(), dims);
    if (!DnnlHasBf16()) continue;
    const DnnlArgument bf16(PlainDesc(shape), dnnl::memory::desc(dims, Type::bf16, Tag::aBcd16b));
    ExpectSameBf16(
        OneDnnReorder<uint16_t>(plain.data(), dims, Type::f32, Tag::abcd, Type::bf16, Tag::aBcd16b),
        static_cast<const uint16_t*>(bf16.In(plain.data()).get_data_handle()), dims);
  }
}

// A Scale (with a folded BatchNorm or not, with a bias or not) reading a
// convolution's blocked output: the values moved back, and the plane loop's
// formula on them, bit for bit. Channel c's factors differ per channel, so a
// wrong channel for a block shows.
TEST_P(ChannelBlocksTest, PlainAndAffineMatchTheMoveAndTheScalarFormula) {
  const Dims dims = GetParam();
  const int num = dims[0], channels = dims[1], spatial = dims[2] * dims[3];
  const std::vector<float> plain = Values(Count(dims), 19);
  std::vector<float> blocks(plain.size());
  PlainToChannelBlocks(plain.data(), blocks.data(), num, channels, spatial);
  std::vector<float> shift(channels), scale(channels), bias(channels);
  for (int c = 0; c < channels; ++c) {
    shift[c] = 0.25f * c - 3;
    scale[c] = 1.f / (c + 3);  // not a power of two: products round
    bias[c] = 0.1f * c;
  }
  for (const bool with_shift : {true, false}) {
    for (const bool with_bias : {true, false}) {
      SCOPED_TRACE(testing::Message() << "shift " << with_shift << ", bias " << with_bias);
      std::vector<float> expected(plain.size());
      for (size_t i = 0; i < plain.size(); ++i) {
        const int c = static_cast<int>(i / spatial) % channels;
        // volatile: each operation rounded on its own, as the kernel does,
        // even where the build lets the compiler fuse a multiply-add.
        volatile float y = with_shift ? plain[i] - shift[c] : plain[i];
        y = y * scale[c];
        expected[i] = with_bias ? y + bias[c] : y;
      }
      std::vector<float> back(plain.size()), affine(plain.size());
      ChannelBlocksToPlainAndAffine(blocks.data(), back.data(), affine.data(), num, channels,
                                    spatial, with_shift ? shift.data() : nullptr, scale.data(),
                                    with_bias ? bias.data() : nullptr);
      ExpectSameBits(plain, back.data(), dims);
      ExpectSameBits(expected, affine.data(), dims);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ChannelBlocksTest,
                         ::testing::Values(Dims{1, 16, 1, 1},     // one position
                                           Dims{1, 16, 4, 4},     // one tile
                                           Dims{2, 32, 5, 7},     // 2 tiles + 3 positions
                                           Dims{3, 48, 14, 14},   // 12 tiles + 4
                                           Dims{2, 64, 17, 3}));  // odd sizes

// Convolution weights (oihw) to oneDNN's three float blocked layouts and the
// three paired bf16 layouts of its bf16 kernels, and a float weight gradient
// from ABcd16b16a back to oihw: directly and as a primitive's argument.
class WeightBlocksTest : public ::testing::TestWithParam<Dims> {
 protected:
  void SetUp() override {
    if (!ChannelBlocksSupported()) GTEST_SKIP() << "this CPU has no AVX-512: reorders run";
  }
};

// For each (tag, layout): `move` (the weights to `layout`) and DnnlArgument::In
// against oneDNN's reorder of float oihw weights to `tag` of type `type`.
template <typename T, typename Layout, typename Move, typename Expect>
void ExpectWeightMovesMatch(const Dims& dims, Type type,
                            const std::vector<std::pair<Tag, Layout>>& layouts, const Move& move,
                            const Expect& expect_same) {
  const std::vector<float> weights = Values(Count(dims), 13);
  const std::vector<int> shape(dims.begin(), dims.end());
  for (const auto& layout : layouts) {
    SCOPED_TRACE("layout " + std::to_string(static_cast<int>(layout.second)));
    const std::vector<T> expected =
        OneDnnReorder<T>(weights.data(), dims, Type::f32, Tag::abcd, type, layout.first);
    std::vector<T> out(expected.size());
    move(weights.data(), out.data(), dims[0], dims[1], dims[2] * dims[3], layout.second);
    expect_same(expected, out.data(), dims);
    const DnnlArgument argument(PlainDesc(shape), dnnl::memory::desc(dims, type, layout.first));
    expect_same(expected, static_cast<const T*>(argument.In(weights.data()).get_data_handle()),
                dims);
  }
}

TEST_P(WeightBlocksTest, FloatLayoutsMatchOneDnnReorder) {
  ExpectWeightMovesMatch<float, FloatWeightLayout>(
      GetParam(), Type::f32,
      {{Tag::ABcd16b16a, FloatWeightLayout::kInputRows},
       {Tag::ABcd16a16b, FloatWeightLayout::kOutputRows},
       {Tag::BAcd16a16b, FloatWeightLayout::kOutputRowsInputsOuter}},
      WeightsToFloatBlocks,
      [](const std::vector<float>& e, const float* a, const Dims& d) { ExpectSameBits(e, a, d); });
}

TEST_P(WeightBlocksTest, Bf16LayoutsMatchOneDnnReorder) {
  if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: no bf16 conversion";
  ExpectWeightMovesMatch<uint16_t, Bf16WeightLayout>(
      GetParam(), Type::bf16,
      {{Tag::ABcd8b16a2b, Bf16WeightLayout::kPairedInputs},
       {Tag::ABcd8a16b2a, Bf16WeightLayout::kPairedOutputs},
       {Tag::BAcd8a16b2a, Bf16WeightLayout::kPairedOutputsInputsOuter}},
      WeightsToBf16Blocks, ExpectSameBf16);
}

TEST_P(WeightBlocksTest, GradientBackToPlainMatchesOneDnnReorder) {
  const Dims dims = GetParam();
  const std::vector<float> plain = Values(Count(dims), 17);
  const std::vector<float> blocks =
      OneDnnReorder<float>(plain.data(), dims, Type::f32, Tag::abcd, Type::f32, Tag::ABcd16b16a);
  std::vector<float> back(plain.size());
  WeightBlocksToPlain(blocks.data(), back.data(), dims[0], dims[1], dims[2] * dims[3]);
  ExpectSameBits(plain, back.data(), dims);
  const std::vector<int> shape(dims.begin(), dims.end());
  const DnnlArgument gradient(PlainDesc(shape),
                              dnnl::memory::desc(dims, Type::f32, Tag::ABcd16b16a));
  const dnnl::memory own = gradient.Out(nullptr);  // what a primitive would write
  std::copy(blocks.begin(), blocks.end(), static_cast<float*>(own.get_data_handle()));
  std::fill(back.begin(), back.end(), 0.f);
  gradient.Finish(back.data());
  ExpectSameBits(plain, back.data(), dims);
}

// A parameter's diff accumulates: the adding move gives, bit for bit, the
// diff plus the gradient moved back, directly and through the argument.
TEST_P(WeightBlocksTest, GradientAddedToPlainEqualsMoveThenAdd) {
  const Dims dims = GetParam();
  const std::vector<float> plain = Values(Count(dims), 17);
  const std::vector<float> earlier = Values(Count(dims), 5);
  std::vector<float> expected(plain.size());
  for (size_t i = 0; i < plain.size(); ++i) expected[i] = earlier[i] + plain[i];
  const std::vector<float> blocks =
      OneDnnReorder<float>(plain.data(), dims, Type::f32, Tag::abcd, Type::f32, Tag::ABcd16b16a);
  std::vector<float> sum = earlier;
  WeightBlocksAddToPlain(blocks.data(), sum.data(), dims[0], dims[1], dims[2] * dims[3]);
  ExpectSameBits(expected, sum.data(), dims);
  const std::vector<int> shape(dims.begin(), dims.end());
  for (const Tag chosen : {Tag::ABcd16b16a, Tag::abcd, Tag::ABcd16a16b}) {
    SCOPED_TRACE(testing::Message() << "chosen layout " << static_cast<int>(chosen));
    const std::vector<float> written =
        OneDnnReorder<float>(plain.data(), dims, Type::f32, Tag::abcd, Type::f32, chosen);
    const DnnlArgument gradient(PlainDesc(shape), dnnl::memory::desc(dims, Type::f32, chosen));
    std::vector<float> buffer(plain.size());
    const dnnl::memory out = gradient.Out(buffer.data());  // what a primitive would write
    std::copy(written.begin(), written.end(), static_cast<float*>(out.get_data_handle()));
    sum = earlier;
    gradient.FinishAdding(buffer.data(), sum.data());
    ExpectSameBits(expected, sum.data(), dims);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, WeightBlocksTest,
                         ::testing::Values(Dims{16, 16, 1, 1},    // one tile
                                           Dims{32, 48, 3, 3},    // 2 x 3 blocks, 9 positions
                                           Dims{64, 32, 1, 1},    // more outputs than inputs
                                           Dims{16, 32, 5, 2}));  // a rectangular kernel

}  // namespace
}  // namespace crema
