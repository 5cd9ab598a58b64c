#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "crema/blob.hpp"
#include "crema/util/math_functions.hpp"
#include "test_common.hpp"

namespace crema {

namespace {

template <typename Dtype>
void ExpectAllNear(const std::vector<Dtype>& expected, const Dtype* actual, Dtype tolerance) {
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(expected[i], actual[i], tolerance) << "at index " << i;
  }
}

template <typename Dtype>
Dtype Mean(const std::vector<Dtype>& values) {
  double sum = 0;
  for (Dtype v : values) sum += v;
  return static_cast<Dtype>(sum / values.size());
}

template <typename Dtype>
Dtype Variance(const std::vector<Dtype>& values) {
  const double mean = Mean(values);
  double sum = 0;
  for (Dtype v : values) sum += (v - mean) * (v - mean);
  return static_cast<Dtype>(sum / values.size());
}

}  // namespace

template <typename Dtype>
class MathFunctionsTest : public ::testing::Test {
 protected:
  // Row-major operands of one small product, and the product written out:
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154].
  const std::vector<Dtype> a_{1, 2, 3, 4, 5, 6};
  const std::vector<Dtype> a_transposed_{1, 4, 2, 5, 3, 6};
  const std::vector<Dtype> b_{7, 8, 9, 10, 11, 12};
  const std::vector<Dtype> b_transposed_{7, 9, 11, 8, 10, 12};
  const std::vector<Dtype> product_{58, 64, 139, 154};

  std::vector<Dtype> Gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b) {
    const std::vector<Dtype>& a = trans_a == CblasNoTrans ? a_ : a_transposed_;
    const std::vector<Dtype>& b = trans_b == CblasNoTrans ? b_ : b_transposed_;
    std::vector<Dtype> c(4, Dtype(-7));  // beta == 0 must overwrite, not scale
    cpu_gemm<Dtype>(trans_a, trans_b, 2, 2, 3, Dtype(1), a.data(), b.data(), Dtype(0), c.data());
    return c;
  }
};

TYPED_TEST_SUITE(MathFunctionsTest, TestDtypes);

TYPED_TEST(MathFunctionsTest, GemmNoTransposes) {
  ExpectAllNear(this->product_, this->Gemm(CblasNoTrans, CblasNoTrans).data(), TypeParam(1e-5));
}

TYPED_TEST(MathFunctionsTest, GemmTransposedA) {
  ExpectAllNear(this->product_, this->Gemm(CblasTrans, CblasNoTrans).data(), TypeParam(1e-5));
}

TYPED_TEST(MathFunctionsTest, GemmTransposedB) {
  ExpectAllNear(this->product_, this->Gemm(CblasNoTrans, CblasTrans).data(), TypeParam(1e-5));
}

TYPED_TEST(MathFunctionsTest, GemmBothTransposed) {
  ExpectAllNear(this->product_, this->Gemm(CblasTrans, CblasTrans).data(), TypeParam(1e-5));
}

TYPED_TEST(MathFunctionsTest, GemmScalesProductAndAccumulates) {
  std::vector<TypeParam> c{1, 2, 3, 4};
  cpu_gemm<TypeParam>(CblasNoTrans, CblasNoTrans, 2, 2, 3, TypeParam(2), this->a_.data(),
                      this->b_.data(), TypeParam(-1), c.data());
  // 2 * product - c
  ExpectAllNear(std::vector<TypeParam>{115, 126, 275, 304}, c.data(), TypeParam(1e-5));
}

TYPED_TEST(MathFunctionsTest, GemmNonSquareShapes) {
  // (1 x 3) * (3 x 2) and (3 x 1) * (1 x 2): leading dimensions differ from M, N and K.
  const std::vector<TypeParam> row{1, 2, 3};
  std::vector<TypeParam> c(2);
  cpu_gemm<TypeParam>(CblasNoTrans, CblasNoTrans, 1, 2, 3, TypeParam(1), row.data(),
                      this->b_.data(), TypeParam(0), c.data());
  ExpectAllNear(std::vector<TypeParam>{58, 64}, c.data(), TypeParam(1e-5));

  const std::vector<TypeParam> pair{1, -1};
  std::vector<TypeParam> outer(6);
  cpu_gemm<TypeParam>(CblasNoTrans, CblasNoTrans, 3, 2, 1, TypeParam(1), row.data(), pair.data(),
                      TypeParam(0), outer.data());
  ExpectAllNear(std::vector<TypeParam>{1, -1, 2, -2, 3, -3}, outer.data(), TypeParam(1e-5));
}

// An empty sum (K = 0: a layer over 0 channels, found by fuzzing, where
// oneDNN's sgemm refused the leading dimension 0) is beta * C; an empty C
// is left alone.
TYPED_TEST(MathFunctionsTest, GemmOverNothingIsBetaTimesC) {
  std::vector<TypeParam> c{1, 2, 3, 4};
  for (CBLAS_TRANSPOSE trans : {CblasNoTrans, CblasTrans}) {
    cpu_gemm<TypeParam>(trans, trans, 2, 2, 0, TypeParam(1), nullptr, nullptr, TypeParam(-2),
                        c.data());
  }
  ExpectAllNear(std::vector<TypeParam>{4, 8, 12, 16}, c.data(), TypeParam(0));
  cpu_gemm<TypeParam>(CblasNoTrans, CblasNoTrans, 2, 2, 0, TypeParam(1), nullptr, nullptr,
                      TypeParam(0), c.data());
  ExpectAllNear(std::vector<TypeParam>{0, 0, 0, 0}, c.data(), TypeParam(0));
  cpu_gemm<TypeParam>(CblasNoTrans, CblasNoTrans, 0, 2, 3, TypeParam(1), nullptr, this->b_.data(),
                      TypeParam(0), nullptr);
}

// Products large enough to be cut into blocks of C's rows (M >= N) or columns
// over the pool, with every transpose, alpha and an accumulating beta, at
// budgets that leave uneven blocks: each equals the product summed here.
TYPED_TEST(MathFunctionsTest, GemmSplitOverThePoolMatchesTheDirectProduct) {
  struct Shape {
    int M, N, K;
  };
  // All above the size from which a product is split (2^23 multiply-adds);
  // the third, a few rows by a big B, is computed as C^T = B * A^T when B is
  // transposed (an inner product over a small batch).
  const Shape shapes[] = {{300, 90, 330}, {60, 410, 350}, {10, 1030, 1050}};
  const CBLAS_TRANSPOSE transposes[] = {CblasNoTrans, CblasTrans};
  for (const Shape& s : shapes) {
    std::vector<TypeParam> a(s.M * s.K), b(s.K * s.N), c0(s.M * s.N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = TypeParam(static_cast<int>(i * 7 % 13) - 6) / 8;
    for (size_t i = 0; i < b.size(); ++i) b[i] = TypeParam(static_cast<int>(i * 5 % 11) - 5) / 8;
    for (size_t i = 0; i < c0.size(); ++i) c0[i] = TypeParam(i % 3);
    for (CBLAS_TRANSPOSE trans_a : transposes) {
      for (CBLAS_TRANSPOSE trans_b : transposes) {
        std::vector<double> expected(c0.size());
        for (int m = 0; m < s.M; ++m) {
          for (int n = 0; n < s.N; ++n) {
            double sum = 0;
            for (int k = 0; k < s.K; ++k) {
              const double a_mk = trans_a == CblasNoTrans ? a[m * s.K + k] : a[k * s.M + m];
              const double b_kn = trans_b == CblasNoTrans ? b[k * s.N + n] : b[n * s.K + k];
              sum += a_mk * b_kn;
            }
            expected[m * s.N + n] = 0.5 * sum + 2.0 * c0[m * s.N + n];
          }
        }
        for (int budget : {1, 2, 3}) {
          ScopedThreadBudget scoped(budget);
          SCOPED_TRACE(testing::Message() << "budget " << budget << ", " << s.M << "x" << s.N << "x"
                                          << s.K << ", trans_a " << (trans_a == CblasTrans)
                                          << ", trans_b " << (trans_b == CblasTrans));
          std::vector<TypeParam> c = c0;
          cpu_gemm<TypeParam>(trans_a, trans_b, s.M, s.N, s.K, TypeParam(0.5), a.data(), b.data(),
                              TypeParam(2), c.data());
          for (size_t i = 0; i < c.size(); ++i) {
            ASSERT_NEAR(c[i], expected[i], 1e-3) << "at row " << i / s.N << ", column " << i % s.N;
          }
        }
      }
    }
  }
}

// Element-wise functions on arrays long enough to be split into blocks over
// the pool, at budgets that split them differently: every value is the
// function of its own inputs (and the split leaves nothing out).
TYPED_TEST(MathFunctionsTest, ElementWiseSplitOverThePool) {
  const int n = 300007;  // odd: uneven blocks
  std::vector<TypeParam> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = TypeParam(1) + TypeParam(i % 97) / 16;
    b[i] = TypeParam(i % 13) - 6;
  }
  for (int budget : {1, 2, 3}) {
    ScopedThreadBudget scoped(budget);
    SCOPED_TRACE("budget " + std::to_string(budget));
    std::vector<TypeParam> y(n, TypeParam(5));
    cpu_mul(n, a.data(), b.data(), y.data());
    for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], a[i] * b[i]) << "mul at " << i;
    // -0.75 (LRN's default exponent) has its own formula; 1.5 is a pow.
    for (TypeParam exponent : {TypeParam(-0.75), TypeParam(1.5)}) {
      cpu_powx(n, a.data(), exponent, y.data());
      for (int i = 0; i < n; ++i) {
        const double expected = std::pow(double(a[i]), double(exponent));
        ASSERT_NEAR(y[i], expected, 1e-6 * expected) << "powx " << exponent << " at " << i;
      }
    }
    cpu_axpby(n, TypeParam(2), a.data(), TypeParam(0.5), y.data());
    for (int i = 0; i < n; ++i) {
      const double expected = 2.0 * a[i] + 0.5 * std::pow(double(a[i]), 1.5);
      ASSERT_NEAR(y[i], expected, 1e-6 * expected) << "axpby at " << i;
    }
    cpu_set(n, TypeParam(0), y.data());
    cpu_axpy(n, TypeParam(-1), b.data(), y.data());
    cpu_add_scalar(n, TypeParam(3), y.data());
    for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], 3 - b[i]) << "set, axpy, add_scalar at " << i;
    cpu_abs(n, b.data(), y.data());
    for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], std::fabs(b[i])) << "abs at " << i;
  }
}

TYPED_TEST(MathFunctionsTest, GemvNoTranspose) {
  const std::vector<TypeParam> x{1, 2, 3};
  std::vector<TypeParam> y(2, TypeParam(99));
  cpu_gemv<TypeParam>(CblasNoTrans, 2, 3, TypeParam(1), this->a_.data(), x.data(), TypeParam(0),
                      y.data());
  ExpectAllNear(std::vector<TypeParam>{14, 32}, y.data(), TypeParam(1e-5));
}

TYPED_TEST(MathFunctionsTest, GemvTransposed) {
  const std::vector<TypeParam> x{2, 1};
  std::vector<TypeParam> y{1, 1, 1};
  // 0.5 * [6 9 12] + 2 * [1 1 1]
  cpu_gemv<TypeParam>(CblasTrans, 2, 3, TypeParam(0.5), this->a_.data(), x.data(), TypeParam(2),
                      y.data());
  ExpectAllNear(std::vector<TypeParam>{5, 6.5, 8}, y.data(), TypeParam(1e-5));
}

TYPED_TEST(MathFunctionsTest, Axpy) {
  const std::vector<TypeParam> x{1, -2, 3};
  std::vector<TypeParam> y{10, 20, 30};
  cpu_axpy<TypeParam>(3, TypeParam(2), x.data(), y.data());
  ExpectAllNear(std::vector<TypeParam>{12, 16, 36}, y.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, Axpby) {
  const std::vector<TypeParam> x{1, -2, 3};
  std::vector<TypeParam> y{10, 20, 30};
  cpu_axpby<TypeParam>(3, TypeParam(2), x.data(), TypeParam(0.5), y.data());
  ExpectAllNear(std::vector<TypeParam>{7, 6, 21}, y.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, AxpbyWithZeroBetaIgnoresOldValues) {
  const std::vector<TypeParam> x{1, -2, 3};
  std::vector<TypeParam> y{std::numeric_limits<TypeParam>::quiet_NaN(), 20,
                           std::numeric_limits<TypeParam>::infinity()};
  cpu_axpby<TypeParam>(3, TypeParam(3), x.data(), TypeParam(0), y.data());
  ExpectAllNear(std::vector<TypeParam>{3, -6, 9}, y.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, Copy) {
  const std::vector<TypeParam> x{1.5, -2, 3.25, 0};
  std::vector<TypeParam> y(4, TypeParam(7));
  cpu_copy<TypeParam>(4, x.data(), y.data());
  EXPECT_EQ(x, y);
  cpu_copy<TypeParam>(4, y.data(), y.data());  // in place is a no-op
  EXPECT_EQ(x, y);
}

TYPED_TEST(MathFunctionsTest, Set) {
  std::vector<TypeParam> y(5, TypeParam(3));
  cpu_set<TypeParam>(4, TypeParam(0), y.data());
  EXPECT_EQ((std::vector<TypeParam>{0, 0, 0, 0, 3}), y);
  cpu_set<TypeParam>(5, TypeParam(-1.5), y.data());
  EXPECT_EQ(std::vector<TypeParam>(5, TypeParam(-1.5)), y);
}

TYPED_TEST(MathFunctionsTest, AddScalar) {
  std::vector<TypeParam> y{1, -2, 0.5};
  cpu_add_scalar<TypeParam>(3, TypeParam(1.5), y.data());
  ExpectAllNear(std::vector<TypeParam>{2.5, -0.5, 2}, y.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, ScalInPlace) {
  std::vector<TypeParam> x{1, -2, 0.5};
  cpu_scal<TypeParam>(3, TypeParam(-4), x.data());
  ExpectAllNear(std::vector<TypeParam>{-4, 8, -2}, x.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, ScaleIntoOutput) {
  const std::vector<TypeParam> x{1, -2, 0.5};
  std::vector<TypeParam> y(3);
  cpu_scale<TypeParam>(3, TypeParam(3), x.data(), y.data());
  ExpectAllNear(std::vector<TypeParam>{3, -6, 1.5}, y.data(), TypeParam(1e-6));
  ExpectAllNear(std::vector<TypeParam>{1, -2, 0.5}, x.data(), TypeParam(0));
}

// Sizes over several cache blocks and pool parts, with a ragged end.
TYPED_TEST(MathFunctionsTest, WeightedSumOfTwoOrMoreInputs) {
  const int n = 3 * (1 << 16) + 17;
  std::vector<TypeParam> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = TypeParam(i % 97) - 48;
    b[i] = TypeParam(i % 31) * TypeParam(0.25);
    c[i] = TypeParam(i % 7) - 3;
  }
  std::vector<TypeParam> y(n);
  cpu_weighted_sum<TypeParam>(n, {a.data(), b.data()}, {1, 1}, y.data());
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], a[i] + b[i]) << "plain sum at " << i;
  cpu_weighted_sum<TypeParam>(n, {a.data(), b.data(), c.data()}, {2, -0.5, 3}, y.data());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(y[i], 2 * a[i] - TypeParam(0.5) * b[i] + 3 * c[i]) << "weighted sum at " << i;
  }
  // In place on the first input.
  std::vector<TypeParam> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = a[i] + c[i];
  cpu_weighted_sum<TypeParam>(n, {a.data(), c.data()}, {1, 1}, a.data());
  EXPECT_EQ(expected, a);
}

TYPED_TEST(MathFunctionsTest, AddSubMulDiv) {
  const std::vector<TypeParam> a{6, -3, 1.5};
  const std::vector<TypeParam> b{2, 4, -0.5};
  std::vector<TypeParam> y(3);
  cpu_add<TypeParam>(3, a.data(), b.data(), y.data());
  ExpectAllNear(std::vector<TypeParam>{8, 1, 1}, y.data(), TypeParam(1e-6));
  cpu_sub<TypeParam>(3, a.data(), b.data(), y.data());
  ExpectAllNear(std::vector<TypeParam>{4, -7, 2}, y.data(), TypeParam(1e-6));
  cpu_mul<TypeParam>(3, a.data(), b.data(), y.data());
  ExpectAllNear(std::vector<TypeParam>{12, -12, -0.75}, y.data(), TypeParam(1e-6));
  cpu_div<TypeParam>(3, a.data(), b.data(), y.data());
  ExpectAllNear(std::vector<TypeParam>{3, -0.75, -3}, y.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, SqrAndSqrt) {
  const std::vector<TypeParam> a{3, -2, 0.5};
  std::vector<TypeParam> squares(3);
  cpu_sqr<TypeParam>(3, a.data(), squares.data());
  ExpectAllNear(std::vector<TypeParam>{9, 4, 0.25}, squares.data(), TypeParam(1e-6));
  std::vector<TypeParam> roots(3);
  cpu_sqrt<TypeParam>(3, squares.data(), roots.data());
  ExpectAllNear(std::vector<TypeParam>{3, 2, 0.5}, roots.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, Powx) {
  const std::vector<TypeParam> a{1, 4, 9, 0.25};
  std::vector<TypeParam> y(4);
  cpu_powx<TypeParam>(4, a.data(), TypeParam(0.5), y.data());
  ExpectAllNear(std::vector<TypeParam>{1, 2, 3, 0.5}, y.data(), TypeParam(1e-6));
  cpu_powx<TypeParam>(4, a.data(), TypeParam(3), y.data());
  ExpectAllNear(std::vector<TypeParam>{1, 64, 729, 0.015625}, y.data(), TypeParam(1e-4));
  cpu_powx<TypeParam>(4, a.data(), TypeParam(-1), y.data());
  ExpectAllNear(std::vector<TypeParam>{1, 0.25, TypeParam(1) / 9, 4}, y.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, ExpKnownValues) {
  const std::vector<TypeParam> a{0, 1, -2};
  std::vector<TypeParam> y(3);
  cpu_exp<TypeParam>(3, a.data(), y.data());
  ExpectAllNear(
      std::vector<TypeParam>{1, TypeParam(2.718281828459045), TypeParam(0.1353352832366127)},
      y.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, LogOfExpRoundTrips) {
  const std::vector<TypeParam> a{-3, -0.5, 0, 0.25, 4};
  std::vector<TypeParam> exps(5);
  std::vector<TypeParam> logs(5);
  cpu_exp<TypeParam>(5, a.data(), exps.data());
  cpu_log<TypeParam>(5, exps.data(), logs.data());
  ExpectAllNear(a, logs.data(), TypeParam(1e-5));
  const std::vector<TypeParam> e{1, TypeParam(2.718281828459045)};
  cpu_log<TypeParam>(2, e.data(), logs.data());
  ExpectAllNear(std::vector<TypeParam>{0, 1}, logs.data(), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, Abs) {
  const std::vector<TypeParam> a{-3, 0.5, 0, TypeParam(-0.0)};
  std::vector<TypeParam> y(4, TypeParam(-1));
  cpu_abs<TypeParam>(4, a.data(), y.data());
  EXPECT_EQ((std::vector<TypeParam>{3, 0.5, 0, 0}), y);
  EXPECT_FALSE(std::signbit(y[3]));
}

TYPED_TEST(MathFunctionsTest, Sign) {
  const std::vector<TypeParam> x{-3, 0.5, 0, TypeParam(-0.0), TypeParam(-1e-30)};
  std::vector<TypeParam> y(5, TypeParam(7));
  cpu_sign<TypeParam>(5, x.data(), y.data());
  EXPECT_EQ((std::vector<TypeParam>{-1, 1, 0, 0, -1}), y);
}

TYPED_TEST(MathFunctionsTest, SgnbitCountsNegativeZero) {
  const std::vector<TypeParam> x{-3, 0.5, 0, TypeParam(-0.0), TypeParam(-1e-30)};
  std::vector<TypeParam> y(5, TypeParam(7));
  cpu_sgnbit<TypeParam>(5, x.data(), y.data());
  EXPECT_EQ((std::vector<TypeParam>{1, 0, 0, 1, 1}), y);
}

TYPED_TEST(MathFunctionsTest, Dot) {
  const std::vector<TypeParam> x{1, 2, 3, -4};
  const std::vector<TypeParam> y{5, -6, 7, 0.5};
  EXPECT_NEAR(TypeParam(12), cpu_dot<TypeParam>(4, x.data(), y.data()), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, StridedDot) {
  const std::vector<TypeParam> x{1, 100, 3, 100, 5, 100};
  const std::vector<TypeParam> y{1, 2, 3, -50, -50, -50};
  // x[0], x[2], x[4] against y[0], y[1], y[2]: 1 + 6 + 15.
  EXPECT_NEAR(TypeParam(22), cpu_strided_dot<TypeParam>(3, x.data(), 2, y.data(), 1),
              TypeParam(1e-6));
  // y[0], y[3] against x[0], x[3].
  EXPECT_NEAR(TypeParam(-4999), cpu_strided_dot<TypeParam>(2, y.data(), 3, x.data(), 3),
              TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, Asum) {
  const std::vector<TypeParam> x{-1, 2, -3.5, 0};
  EXPECT_NEAR(TypeParam(6.5), cpu_asum<TypeParam>(4, x.data()), TypeParam(1e-6));
}

TYPED_TEST(MathFunctionsTest, RngUniformInRangeWithUniformMoments) {
  const TypeParam a = -1, b = 3;
  std::vector<TypeParam> r(10000);
  rng_uniform<TypeParam>(r.size(), a, b, r.data());
  for (TypeParam v : r) {
    ASSERT_GE(v, a);
    ASSERT_LT(v, b);
  }
  EXPECT_NEAR((a + b) / 2, Mean(r), TypeParam(0.05));
  EXPECT_NEAR((b - a) * (b - a) / 12, Variance(r), TypeParam(0.07));
}

TYPED_TEST(MathFunctionsTest, RngUniformNarrowRangeStaysBelowUpperBound) {
  const TypeParam a = 1;
  const TypeParam b = std::nextafter(a, TypeParam(2));  // no value strictly between
  std::vector<TypeParam> r(1000);
  rng_uniform<TypeParam>(r.size(), a, b, r.data());
  for (TypeParam v : r) ASSERT_EQ(a, v);
}

TYPED_TEST(MathFunctionsTest, RngUniformEmptyRangeGivesLowerBound) {
  std::vector<TypeParam> r(10, TypeParam(0));
  rng_uniform<TypeParam>(r.size(), TypeParam(2.5), TypeParam(2.5), r.data());
  EXPECT_EQ(std::vector<TypeParam>(10, TypeParam(2.5)), r);
}

TYPED_TEST(MathFunctionsTest, RngGaussianMoments) {
  const TypeParam mu = 2, sigma = 3;
  std::vector<TypeParam> r(10000);
  rng_gaussian<TypeParam>(r.size(), mu, sigma, r.data());
  EXPECT_NEAR(mu, Mean(r), TypeParam(0.15));
  EXPECT_NEAR(sigma, std::sqrt(Variance(r)), TypeParam(0.1));
}

TYPED_TEST(MathFunctionsTest, RngBernoulliFraction) {
  const TypeParam p = 0.3;
  std::vector<int> ints(10000);
  std::vector<unsigned int> unsigneds(10000);
  rng_bernoulli<TypeParam>(ints.size(), p, ints.data());
  rng_bernoulli<TypeParam>(unsigneds.size(), p, unsigneds.data());
  double int_ones = 0, unsigned_ones = 0;
  for (size_t i = 0; i < ints.size(); ++i) {
    ASSERT_TRUE(ints[i] == 0 || ints[i] == 1);
    ASSERT_TRUE(unsigneds[i] == 0u || unsigneds[i] == 1u);
    int_ones += ints[i];
    unsigned_ones += unsigneds[i];
  }
  EXPECT_NEAR(p, int_ones / ints.size(), 0.02);
  EXPECT_NEAR(p, unsigned_ones / unsigneds.size(), 0.02);
}

TYPED_TEST(MathFunctionsTest, RngBernoulliExtremeProbabilities) {
  std::vector<int> r(100, 7);
  rng_bernoulli<TypeParam>(r.size(), TypeParam(0), r.data());
  EXPECT_EQ(std::vector<int>(100, 0), r);
  rng_bernoulli<TypeParam>(r.size(), TypeParam(1), r.data());
  EXPECT_EQ(std::vector<int>(100, 1), r);
}

TYPED_TEST(MathFunctionsTest, ReseedingReproducesTheStream) {
  std::vector<TypeParam> uniform_first(50), uniform_second(50);
  std::vector<TypeParam> gaussian_first(50), gaussian_second(50);
  std::vector<int> bernoulli_first(50), bernoulli_second(50);

  Context::set_random_seed(4242);
  const uint32_t raw_first = rng_rand();
  rng_uniform<TypeParam>(50, TypeParam(0), TypeParam(1), uniform_first.data());
  rng_gaussian<TypeParam>(50, TypeParam(0), TypeParam(1), gaussian_first.data());
  rng_bernoulli<TypeParam>(50, TypeParam(0.5), bernoulli_first.data());

  Context::set_random_seed(4242);
  EXPECT_EQ(raw_first, rng_rand());
  rng_uniform<TypeParam>(50, TypeParam(0), TypeParam(1), uniform_second.data());
  rng_gaussian<TypeParam>(50, TypeParam(0), TypeParam(1), gaussian_second.data());
  rng_bernoulli<TypeParam>(50, TypeParam(0.5), bernoulli_second.data());

  EXPECT_EQ(uniform_first, uniform_second);
  EXPECT_EQ(gaussian_first, gaussian_second);
  EXPECT_EQ(bernoulli_first, bernoulli_second);
}

TYPED_TEST(MathFunctionsTest, DifferentSeedsGiveDifferentStreams) {
  std::vector<TypeParam> first(20), second(20);
  Context::set_random_seed(1);
  rng_uniform<TypeParam>(20, TypeParam(0), TypeParam(1), first.data());
  Context::set_random_seed(2);
  rng_uniform<TypeParam>(20, TypeParam(0), TypeParam(1), second.data());
  EXPECT_NE(first, second);
}

// Copy and set also serve integer buffers (labels, masks, shapes).
TEST(MathFunctionsIntegerTest, CopyAndSetIntegers) {
  const std::vector<int> ints{3, -1, 4};
  std::vector<int> int_copy(3);
  cpu_copy<int>(3, ints.data(), int_copy.data());
  EXPECT_EQ(ints, int_copy);
  cpu_set<int>(3, -5, int_copy.data());
  EXPECT_EQ(std::vector<int>(3, -5), int_copy);
  cpu_set<int>(2, 0, int_copy.data());
  EXPECT_EQ((std::vector<int>{0, 0, -5}), int_copy);

  const std::vector<unsigned int> unsigneds{7u, 0u, 4000000000u};
  std::vector<unsigned int> unsigned_copy(3);
  cpu_copy<unsigned int>(3, unsigneds.data(), unsigned_copy.data());
  EXPECT_EQ(unsigneds, unsigned_copy);
  cpu_set<unsigned int>(3, 9u, unsigned_copy.data());
  EXPECT_EQ(std::vector<unsigned int>(3, 9u), unsigned_copy);
}

TEST(MathFunctionsIntegerTest, RngRandFollowsTheSeed) {
  Context::set_random_seed(77);
  const uint32_t first = rng_rand();
  const uint32_t second = rng_rand();
  EXPECT_NE(first, second);
  Context::set_random_seed(77);
  EXPECT_EQ(first, rng_rand());
  EXPECT_EQ(second, rng_rand());
}

template <typename Dtype>
class MathFunctionsDeathTest : public ::testing::Test {};

TYPED_TEST_SUITE(MathFunctionsDeathTest, TestDtypes);

TYPED_TEST(MathFunctionsDeathTest, RngRejectsInvalidParameters) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TypeParam values[2];
  int bits[2];
  EXPECT_DEATH(rng_uniform<TypeParam>(2, TypeParam(1), TypeParam(0), values), "");
  EXPECT_DEATH(rng_gaussian<TypeParam>(2, TypeParam(0), TypeParam(0), values), "");
  EXPECT_DEATH(rng_bernoulli<TypeParam>(2, TypeParam(1.5), bits), "");
  EXPECT_DEATH(rng_bernoulli<TypeParam>(2, TypeParam(-0.1), bits), "");
}

#ifdef CREMA_CUDA

// Each GPU function against its CPU twin on the same random inputs, held in
// blobs so that the data moves between host and device through SyncedMemory.
template <typename Dtype>
class MathFunctionsGpuTest : public ::testing::Test {
 protected:
  // An odd count, so kernels' tails and odd-length RNG requests are exercised.
  static constexpr int kCount = 3 * 5 * 7 * 11;

  MathFunctionsGpuTest() : a_(Shape()), b_(Shape()), y_(Shape()) {}
  static std::vector<int> Shape() { return {3, 5, 7, 11}; }

  void SetUp() override {
    CREMA_SKIP_WITHOUT_GPU();
    Context::set_mode(Context::GPU);
    rng_uniform<Dtype>(kCount, Dtype(-2), Dtype(2), a_.mutable_cpu_data());
    rng_uniform<Dtype>(kCount, Dtype(0.5), Dtype(3), b_.mutable_cpu_data());
    rng_uniform<Dtype>(kCount, Dtype(-1), Dtype(1), y_.mutable_cpu_data());
  }
  void TearDown() override { Context::set_mode(Context::CPU); }

  std::vector<Dtype> HostCopy(const Blob<Dtype>& blob) const {
    return std::vector<Dtype>(blob.cpu_data(), blob.cpu_data() + blob.count());
  }

  // Compares y_ (after a GPU call) with the CPU result, relative to its size.
  void ExpectYMatches(const std::vector<Dtype>& expected) {
    const Dtype* actual = y_.cpu_data();
    const Dtype tolerance = sizeof(Dtype) == sizeof(float) ? Dtype(1e-5) : Dtype(1e-12);
    for (size_t i = 0; i < expected.size(); ++i) {
      const Dtype scale = std::max(Dtype(1), std::fabs(expected[i]));
      ASSERT_NEAR(expected[i], actual[i], tolerance * scale) << "at index " << i;
    }
  }

  Blob<Dtype> a_;
  Blob<Dtype> b_;
  Blob<Dtype> y_;
};

TYPED_TEST_SUITE(MathFunctionsGpuTest, TestDtypes);

TYPED_TEST(MathFunctionsGpuTest, GemmAllTransposes) {
  const int M = 5, N = 7, K = 11;
  Blob<TypeParam> a({M, K}), b({K, N}), c({M, N});
  rng_uniform<TypeParam>(M * K, TypeParam(-1), TypeParam(1), a.mutable_cpu_data());
  rng_uniform<TypeParam>(K * N, TypeParam(-1), TypeParam(1), b.mutable_cpu_data());
  for (CBLAS_TRANSPOSE trans_a : {CblasNoTrans, CblasTrans}) {
    for (CBLAS_TRANSPOSE trans_b : {CblasNoTrans, CblasTrans}) {
      rng_uniform<TypeParam>(M * N, TypeParam(-1), TypeParam(1), c.mutable_cpu_data());
      std::vector<TypeParam> expected = this->HostCopy(c);
      cpu_gemm<TypeParam>(trans_a, trans_b, M, N, K, TypeParam(1.5), a.cpu_data(), b.cpu_data(),
                          TypeParam(-0.5), expected.data());
      gpu_gemm<TypeParam>(trans_a, trans_b, M, N, K, TypeParam(1.5), a.gpu_data(), b.gpu_data(),
                          TypeParam(-0.5), c.mutable_gpu_data());
      const TypeParam* actual = c.cpu_data();
      for (int i = 0; i < M * N; ++i) {
        ASSERT_NEAR(expected[i], actual[i], TypeParam(1e-4))
            << "trans_a " << trans_a << " trans_b " << trans_b << " at " << i;
      }
    }
  }
}

TYPED_TEST(MathFunctionsGpuTest, GemvBothWays) {
  const int M = 5, N = 7;
  Blob<TypeParam> a({M, N}), x_cols({N}), x_rows({M}), y_rows({M}), y_cols({N});
  rng_uniform<TypeParam>(M * N, TypeParam(-1), TypeParam(1), a.mutable_cpu_data());
  rng_uniform<TypeParam>(N, TypeParam(-1), TypeParam(1), x_cols.mutable_cpu_data());
  rng_uniform<TypeParam>(M, TypeParam(-1), TypeParam(1), x_rows.mutable_cpu_data());
  rng_uniform<TypeParam>(M, TypeParam(-1), TypeParam(1), y_rows.mutable_cpu_data());
  rng_uniform<TypeParam>(N, TypeParam(-1), TypeParam(1), y_cols.mutable_cpu_data());

  std::vector<TypeParam> expected = this->HostCopy(y_rows);
  cpu_gemv<TypeParam>(CblasNoTrans, M, N, TypeParam(2), a.cpu_data(), x_cols.cpu_data(),
                      TypeParam(0.5), expected.data());
  gpu_gemv<TypeParam>(CblasNoTrans, M, N, TypeParam(2), a.gpu_data(), x_cols.gpu_data(),
                      TypeParam(0.5), y_rows.mutable_gpu_data());
  ExpectAllNear(expected, y_rows.cpu_data(), TypeParam(1e-4));

  expected = this->HostCopy(y_cols);
  cpu_gemv<TypeParam>(CblasTrans, M, N, TypeParam(2), a.cpu_data(), x_rows.cpu_data(),
                      TypeParam(0.5), expected.data());
  gpu_gemv<TypeParam>(CblasTrans, M, N, TypeParam(2), a.gpu_data(), x_rows.gpu_data(),
                      TypeParam(0.5), y_cols.mutable_gpu_data());
  ExpectAllNear(expected, y_cols.cpu_data(), TypeParam(1e-4));
}

TYPED_TEST(MathFunctionsGpuTest, Axpy) {
  std::vector<TypeParam> expected = this->HostCopy(this->y_);
  cpu_axpy<TypeParam>(this->kCount, TypeParam(-1.5), this->a_.cpu_data(), expected.data());
  gpu_axpy<TypeParam>(this->kCount, TypeParam(-1.5), this->a_.gpu_data(),
                      this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
}

TYPED_TEST(MathFunctionsGpuTest, Axpby) {
  std::vector<TypeParam> expected = this->HostCopy(this->y_);
  cpu_axpby<TypeParam>(this->kCount, TypeParam(-1.5), this->a_.cpu_data(), TypeParam(0.25),
                       expected.data());
  gpu_axpby<TypeParam>(this->kCount, TypeParam(-1.5), this->a_.gpu_data(), TypeParam(0.25),
                       this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
}

TYPED_TEST(MathFunctionsGpuTest, AxpbyWithZeroBetaIgnoresOldValues) {
  TypeParam* y = this->y_.mutable_cpu_data();
  y[0] = std::numeric_limits<TypeParam>::quiet_NaN();
  std::vector<TypeParam> expected = this->HostCopy(this->y_);
  cpu_axpby<TypeParam>(this->kCount, TypeParam(2), this->a_.cpu_data(), TypeParam(0),
                       expected.data());
  gpu_axpby<TypeParam>(this->kCount, TypeParam(2), this->a_.gpu_data(), TypeParam(0),
                       this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
}

TYPED_TEST(MathFunctionsGpuTest, Memcpy) {
  gpu_memcpy(sizeof(TypeParam) * this->kCount, this->a_.gpu_data(), this->y_.mutable_gpu_data());
  this->ExpectYMatches(this->HostCopy(this->a_));
}

TYPED_TEST(MathFunctionsGpuTest, SetZeroAndNonZero) {
  gpu_set<TypeParam>(this->kCount, TypeParam(0), this->y_.mutable_gpu_data());
  this->ExpectYMatches(std::vector<TypeParam>(this->kCount, TypeParam(0)));
  gpu_set<TypeParam>(this->kCount, TypeParam(-2.75), this->y_.mutable_gpu_data());
  this->ExpectYMatches(std::vector<TypeParam>(this->kCount, TypeParam(-2.75)));
}

TYPED_TEST(MathFunctionsGpuTest, AddScalar) {
  std::vector<TypeParam> expected = this->HostCopy(this->y_);
  cpu_add_scalar<TypeParam>(this->kCount, TypeParam(0.75), expected.data());
  gpu_add_scalar<TypeParam>(this->kCount, TypeParam(0.75), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
}

TYPED_TEST(MathFunctionsGpuTest, ScalAndScale) {
  std::vector<TypeParam> expected = this->HostCopy(this->y_);
  cpu_scal<TypeParam>(this->kCount, TypeParam(-3), expected.data());
  gpu_scal<TypeParam>(this->kCount, TypeParam(-3), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_scale<TypeParam>(this->kCount, TypeParam(0.5), this->a_.cpu_data(), expected.data());
  gpu_scale<TypeParam>(this->kCount, TypeParam(0.5), this->a_.gpu_data(),
                       this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
}

TYPED_TEST(MathFunctionsGpuTest, AddSubMulDiv) {
  const int n = this->kCount;
  const TypeParam* a = this->a_.cpu_data();
  const TypeParam* b = this->b_.cpu_data();
  std::vector<TypeParam> expected(n);

  cpu_add<TypeParam>(n, a, b, expected.data());
  gpu_add<TypeParam>(n, this->a_.gpu_data(), this->b_.gpu_data(), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_sub<TypeParam>(n, a, b, expected.data());
  gpu_sub<TypeParam>(n, this->a_.gpu_data(), this->b_.gpu_data(), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_mul<TypeParam>(n, a, b, expected.data());
  gpu_mul<TypeParam>(n, this->a_.gpu_data(), this->b_.gpu_data(), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_div<TypeParam>(n, a, b, expected.data());
  gpu_div<TypeParam>(n, this->a_.gpu_data(), this->b_.gpu_data(), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
}

TYPED_TEST(MathFunctionsGpuTest, UnaryFunctions) {
  const int n = this->kCount;
  // b_ is positive, so sqrt, log and fractional powers are defined on it.
  const TypeParam* positive = this->b_.cpu_data();
  const TypeParam* positive_gpu = this->b_.gpu_data();
  const TypeParam* any = this->a_.cpu_data();
  const TypeParam* any_gpu = this->a_.gpu_data();
  std::vector<TypeParam> expected(n);

  cpu_sqr<TypeParam>(n, any, expected.data());
  gpu_sqr<TypeParam>(n, any_gpu, this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_sqrt<TypeParam>(n, positive, expected.data());
  gpu_sqrt<TypeParam>(n, positive_gpu, this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_powx<TypeParam>(n, positive, TypeParam(1.7), expected.data());
  gpu_powx<TypeParam>(n, positive_gpu, TypeParam(1.7), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_exp<TypeParam>(n, any, expected.data());
  gpu_exp<TypeParam>(n, any_gpu, this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_log<TypeParam>(n, positive, expected.data());
  gpu_log<TypeParam>(n, positive_gpu, this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_abs<TypeParam>(n, any, expected.data());
  gpu_abs<TypeParam>(n, any_gpu, this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
}

TYPED_TEST(MathFunctionsGpuTest, SignAndSgnbitIncludingZeros) {
  TypeParam* a = this->a_.mutable_cpu_data();
  a[0] = TypeParam(0);
  a[1] = TypeParam(-0.0);
  std::vector<TypeParam> expected(this->kCount);

  cpu_sign<TypeParam>(this->kCount, this->a_.cpu_data(), expected.data());
  gpu_sign<TypeParam>(this->kCount, this->a_.gpu_data(), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);

  cpu_sgnbit<TypeParam>(this->kCount, this->a_.cpu_data(), expected.data());
  gpu_sgnbit<TypeParam>(this->kCount, this->a_.gpu_data(), this->y_.mutable_gpu_data());
  this->ExpectYMatches(expected);
  EXPECT_EQ(TypeParam(0), this->y_.cpu_data()[0]);
  EXPECT_EQ(TypeParam(1), this->y_.cpu_data()[1]);
}

TYPED_TEST(MathFunctionsGpuTest, DotAndAsum) {
  const TypeParam tolerance =
      sizeof(TypeParam) == sizeof(float) ? TypeParam(1e-3) : TypeParam(1e-10);
  const TypeParam expected_dot =
      cpu_dot<TypeParam>(this->kCount, this->a_.cpu_data(), this->b_.cpu_data());
  TypeParam dot = 0;
  gpu_dot<TypeParam>(this->kCount, this->a_.gpu_data(), this->b_.gpu_data(), &dot);
  EXPECT_NEAR(expected_dot, dot, tolerance * std::fabs(expected_dot));

  const TypeParam expected_asum = cpu_asum<TypeParam>(this->kCount, this->a_.cpu_data());
  TypeParam asum = 0;
  gpu_asum<TypeParam>(this->kCount, this->a_.gpu_data(), &asum);
  EXPECT_NEAR(expected_asum, asum, tolerance * expected_asum);
}

TYPED_TEST(MathFunctionsGpuTest, RngUniformInRangeWithUniformMoments) {
  const TypeParam a = -1, b = 3;
  Blob<TypeParam> r({10000});
  gpu_rng_uniform<TypeParam>(r.count(), a, b, r.mutable_gpu_data());
  const std::vector<TypeParam> values = this->HostCopy(r);
  for (TypeParam v : values) {
    ASSERT_GE(v, a);
    ASSERT_LT(v, b);
  }
  EXPECT_NEAR((a + b) / 2, Mean(values), TypeParam(0.05));
  EXPECT_NEAR((b - a) * (b - a) / 12, Variance(values), TypeParam(0.07));
}

TYPED_TEST(MathFunctionsGpuTest, RngGaussianOddCountMoments) {
  const TypeParam mu = -1, sigma = 0.5;
  Blob<TypeParam> r({10001});
  gpu_rng_gaussian<TypeParam>(r.count(), mu, sigma, r.mutable_gpu_data());
  const std::vector<TypeParam> values = this->HostCopy(r);
  EXPECT_NEAR(mu, Mean(values), TypeParam(0.03));
  EXPECT_NEAR(sigma, std::sqrt(Variance(values)), TypeParam(0.02));

  Blob<TypeParam> single({1});
  single.mutable_cpu_data()[0] = std::numeric_limits<TypeParam>::quiet_NaN();
  gpu_rng_gaussian<TypeParam>(1, mu, sigma, single.mutable_gpu_data());
  EXPECT_TRUE(std::isfinite(single.cpu_data()[0]));
}

TYPED_TEST(MathFunctionsGpuTest, ReseedingReproducesTheGpuStream) {
  Blob<TypeParam> first({101}), second({101});
  Context::set_random_seed(31337);
  gpu_rng_gaussian<TypeParam>(first.count(), TypeParam(0), TypeParam(1), first.mutable_gpu_data());
  Context::set_random_seed(31337);
  gpu_rng_gaussian<TypeParam>(second.count(), TypeParam(0), TypeParam(1),
                              second.mutable_gpu_data());
  EXPECT_EQ(this->HostCopy(first), this->HostCopy(second));
}

class MathFunctionsGpuIntegerTest : public GpuTest {};

TEST_F(MathFunctionsGpuIntegerTest, SetIntegers) {
  const int n = 1001;
  int* ints = nullptr;
  unsigned int* unsigneds = nullptr;
  CUDA_CHECK(cudaMalloc(&ints, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&unsigneds, n * sizeof(unsigned int)));
  gpu_set<int>(n, -7, ints);
  gpu_set<unsigned int>(n, 4000000000u, unsigneds);
  std::vector<int> host_ints(n);
  std::vector<unsigned int> host_unsigneds(n);
  CUDA_CHECK(cudaMemcpy(host_ints.data(), ints, n * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(host_unsigneds.data(), unsigneds, n * sizeof(unsigned int),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(ints));
  CUDA_CHECK(cudaFree(unsigneds));
  EXPECT_EQ(std::vector<int>(n, -7), host_ints);
  EXPECT_EQ(std::vector<unsigned int>(n, 4000000000u), host_unsigneds);
}

TEST_F(MathFunctionsGpuIntegerTest, RngUniformBits) {
  const int n = 10000;
  unsigned int* bits = nullptr;
  CUDA_CHECK(cudaMalloc(&bits, n * sizeof(unsigned int)));
  gpu_rng_uniform(n, bits);
  std::vector<unsigned int> host(n);
  CUDA_CHECK(cudaMemcpy(host.data(), bits, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(bits));
  // Uniform 32-bit words: mean 1/2 of the range, top bit set half the time.
  double mean = 0;
  int top_bit_set = 0;
  for (unsigned int v : host) {
    mean += v / 4294967296.0;
    top_bit_set += (v >> 31) & 1u;
  }
  EXPECT_NEAR(0.5, mean / n, 0.02);
  EXPECT_NEAR(0.5, static_cast<double>(top_bit_set) / n, 0.02);
}

#endif  // CREMA_CUDA

}  // namespace crema
