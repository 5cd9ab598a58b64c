// Float nchw to bf16 nChw16c (FloatToBlockedBf16, and DnnlArgument::In where
// a bf16 convolution's operand takes that path): the same bits as oneDNN's
// own reorder, for every spatial size (whole 16-position tiles and the
// positions after them), batch and channel count, and for the values whose
// rounding is delicate (ties, the largest floats, infinities, NaN, denormals).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "crema/util/dnnl.hpp"

#ifdef CREMA_DNNL
#include "crema/util/bf16_blocks.hpp"
#endif

namespace crema {
namespace {

#ifdef CREMA_DNNL

using Tag = dnnl::memory::format_tag;
using Type = dnnl::memory::data_type;

// Random values with the delicate ones mixed in.
std::vector<float> Values(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 3.f);
  const float specials[] = {0.f,
                            -0.f,
                            1.f + 1.f / 256,  // a tie: rounds to even
                            1.f + 3.f / 256,  // a tie: rounds up to even
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

// What oneDNN's reorder makes of `values` (nchw f32) in bf16 nChw16c.
std::vector<uint16_t> OneDnnBlocks(const std::vector<float>& values,
                                   const dnnl::memory::dims& dims) {
  const dnnl::memory::desc plain(dims, Type::f32, Tag::abcd),
      blocked(dims, Type::bf16, Tag::aBcd16b);
  std::vector<uint16_t> out(blocked.get_size() / sizeof(uint16_t));
  dnnl::memory from(plain, DnnlEngine(), const_cast<float*>(values.data()));
  dnnl::memory to(blocked, DnnlEngine(), out.data());
  DnnlRun(dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  return out;
}

void ExpectSameBits(const std::vector<uint16_t>& expected, const uint16_t* actual,
                    const dnnl::memory::dims& dims) {
  int differing = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const bool both_nan = (expected[i] & 0x7fff) > 0x7f80 && (actual[i] & 0x7fff) > 0x7f80;
    if (expected[i] != actual[i] && !both_nan && differing++ < 5) {
      ADD_FAILURE() << "element " << i << " of " << dims[0] << "x" << dims[1] << "x" << dims[2]
                    << "x" << dims[3] << ": 0x" << std::hex << actual[i] << ", oneDNN 0x"
                    << expected[i];
    }
  }
  EXPECT_EQ(differing, 0);
}

class Bf16BlocksTest : public ::testing::TestWithParam<dnnl::memory::dims> {
 protected:
  void SetUp() override {
    if (!DnnlHasBf16()) GTEST_SKIP() << "this CPU has no avx512_bf16: the conversion is not used";
  }
};

TEST_P(Bf16BlocksTest, ConversionMatchesOneDnnReorder) {
  const dnnl::memory::dims dims = GetParam();
  const std::vector<float> values = Values(dims[0] * dims[1] * dims[2] * dims[3], 7);
  std::vector<uint16_t> out(values.size());
  FloatToBlockedBf16(values.data(), out.data(), dims[0], dims[1], dims[2] * dims[3]);
  ExpectSameBits(OneDnnBlocks(values, dims), out.data(), dims);
}

// The argument of a primitive: the fast conversion where it applies (a
// multiple of 16 channels), oneDNN's reorder elsewhere; the same bits either way.
TEST_P(Bf16BlocksTest, ArgumentInMatchesOneDnnReorder) {
  for (const dnnl::memory::dim channels : {GetParam()[1], GetParam()[1] + 8}) {
    dnnl::memory::dims dims = GetParam();
    dims[1] = channels;
    const std::vector<float> values = Values(dims[0] * dims[1] * dims[2] * dims[3], 11);
    const DnnlArgument argument(PlainDesc({static_cast<int>(dims[0]), static_cast<int>(dims[1]),
                                           static_cast<int>(dims[2]), static_cast<int>(dims[3])}),
                                dnnl::memory::desc(dims, Type::bf16, Tag::aBcd16b));
    const dnnl::memory in = argument.In(values.data());
    ExpectSameBits(OneDnnBlocks(values, dims), static_cast<const uint16_t*>(in.get_data_handle()),
                   dims);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16BlocksTest,
                         ::testing::Values(dnnl::memory::dims{1, 16, 1, 1},     // one position
                                           dnnl::memory::dims{1, 16, 4, 4},     // one tile
                                           dnnl::memory::dims{2, 32, 5, 7},     // 2 tiles + 3
                                           dnnl::memory::dims{3, 48, 14, 14},   // 12 tiles + 4
                                           dnnl::memory::dims{2, 64, 17, 3}));  // odd sizes

#endif  // CREMA_DNNL

}  // namespace
}  // namespace crema
