#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

using ::testing::HasSubstr;

FillerParameter Param(const std::string& type) {
  FillerParameter param;
  param.set_type(type);
  return param;
}

template <typename Dtype>
void Fill(const FillerParameter& param, Blob<Dtype>* blob) {
  GetFiller<Dtype>(param)->Fill(blob);
}

// The message of the crema::Error that `action` throws ("" if it throws none).
std::string ErrorMessage(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

struct Moments {
  double mean;
  double variance;
};

template <typename Dtype>
Moments MomentsOf(const Dtype* values, int count) {
  double sum = 0;
  for (int i = 0; i < count; ++i) sum += values[i];
  const double mean = sum / count;
  double squares = 0;
  for (int i = 0; i < count; ++i) squares += (values[i] - mean) * (values[i] - mean);
  return {mean, squares / count};
}

template <typename Dtype>
Moments MomentsOf(const Blob<Dtype>& blob) {
  return MomentsOf(blob.cpu_data(), blob.count());
}

template <typename Dtype>
class FillerConstantTest : public ::testing::Test {};
TYPED_TEST_SUITE(FillerConstantTest, TestDtypes);

TYPED_TEST(FillerConstantTest, EveryValueIsTheConstant) {
  Blob<TypeParam> blob(2, 3, 4, 5);
  FillerParameter param = Param("constant");
  param.set_value(3.5f);
  Fill(param, &blob);
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(TypeParam(3.5), blob.cpu_data()[i]);
}

TYPED_TEST(FillerConstantTest, DefaultParameterFillsZeros) {
  Blob<TypeParam> blob({3, 4});
  blob.mutable_cpu_data()[5] = TypeParam(9);
  Fill(FillerParameter(), &blob);
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(TypeParam(0), blob.cpu_data()[i]);
}

template <typename Dtype>
class FillerUniformTest : public ::testing::Test {};
TYPED_TEST_SUITE(FillerUniformTest, TestDtypes);

TYPED_TEST(FillerUniformTest, ValuesInRangeWithTheRightMean) {
  Blob<TypeParam> blob({100, 200});
  FillerParameter param = Param("uniform");
  param.set_min(-2);
  param.set_max(3);
  Fill(param, &blob);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_GE(blob.cpu_data()[i], TypeParam(-2));
    EXPECT_LT(blob.cpu_data()[i], TypeParam(3));
  }
  const Moments moments = MomentsOf(blob);
  EXPECT_NEAR(0.5, moments.mean, 0.05);
  EXPECT_NEAR(25.0 / 12.0, moments.variance, 0.1);
}

TYPED_TEST(FillerUniformTest, EmptyIntervalGivesTheBound) {
  Blob<TypeParam> blob({4, 5});
  FillerParameter param = Param("uniform");
  param.set_min(1.25f);
  param.set_max(1.25f);
  Fill(param, &blob);
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(TypeParam(1.25), blob.cpu_data()[i]);
}

TYPED_TEST(FillerUniformTest, MinAboveMaxIsAnError) {
  Blob<TypeParam> blob({4, 5});
  FillerParameter param = Param("uniform");
  param.set_min(2);
  param.set_max(1);
  EXPECT_THROW(Fill(param, &blob), Error);
  EXPECT_THAT(ErrorMessage([&] { Fill(param, &blob); }), HasSubstr("min"));
}

template <typename Dtype>
class FillerGaussianTest : public ::testing::Test {};
TYPED_TEST_SUITE(FillerGaussianTest, TestDtypes);

TYPED_TEST(FillerGaussianTest, MeanAndStd) {
  Blob<TypeParam> blob({100, 100, 5});
  FillerParameter param = Param("gaussian");
  param.set_mean(1.5f);
  param.set_std(2);
  Fill(param, &blob);
  const Moments moments = MomentsOf(blob);
  EXPECT_NEAR(1.5, moments.mean, 0.05);
  EXPECT_NEAR(2.0, std::sqrt(moments.variance), 0.05);
}

TYPED_TEST(FillerGaussianTest, SparseKeepsTheExpectedFraction) {
  // 400 outputs, sparse 20: each value survives with probability 1/20.
  Blob<TypeParam> blob({400, 100});
  FillerParameter param = Param("gaussian");
  param.set_std(1);
  param.set_sparse(20);
  Fill(param, &blob);
  std::vector<TypeParam> kept;
  for (int i = 0; i < blob.count(); ++i) {
    if (blob.cpu_data()[i] != 0) kept.push_back(blob.cpu_data()[i]);
  }
  EXPECT_NEAR(0.05, static_cast<double>(kept.size()) / blob.count(), 0.01);
  // The survivors are still N(0, 1) draws.
  const Moments moments = MomentsOf(kept.data(), static_cast<int>(kept.size()));
  EXPECT_NEAR(1.0, std::sqrt(moments.variance), 0.1);
}

TYPED_TEST(FillerGaussianTest, SparseAtLeastTheOutputsKeepsEverything) {
  Blob<TypeParam> blob({10, 50});
  FillerParameter param = Param("gaussian");
  param.set_sparse(10);
  Fill(param, &blob);
  for (int i = 0; i < blob.count(); ++i) EXPECT_NE(TypeParam(0), blob.cpu_data()[i]);
}

TYPED_TEST(FillerGaussianTest, SparseZeroZeroesEverything) {
  Blob<TypeParam> blob({10, 50});
  FillerParameter param = Param("gaussian");
  param.set_sparse(0);
  Fill(param, &blob);
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(TypeParam(0), blob.cpu_data()[i]);
}

TYPED_TEST(FillerGaussianTest, SparseNeedsAnAxis) {
  Blob<TypeParam> blob(std::vector<int>{});
  FillerParameter param = Param("gaussian");
  param.set_sparse(5);
  EXPECT_THROW(Fill(param, &blob), Error);
  EXPECT_THAT(ErrorMessage([&] { Fill(param, &blob); }), HasSubstr("axes"));
}

TYPED_TEST(FillerGaussianTest, NonPositiveStdIsAnError) {
  Blob<TypeParam> blob({4, 5});
  FillerParameter param = Param("gaussian");
  param.set_std(0);
  EXPECT_THROW(Fill(param, &blob), Error);
  param.set_std(-1);
  EXPECT_THAT(ErrorMessage([&] { Fill(param, &blob); }), HasSubstr("std"));
}

template <typename Dtype>
class FillerPositiveUnitballTest : public ::testing::Test {};
TYPED_TEST_SUITE(FillerPositiveUnitballTest, TestDtypes);

TYPED_TEST(FillerPositiveUnitballTest, RowsAreNonNegativeAndSumToOne) {
  Blob<TypeParam> blob(10, 3, 4, 5);
  Fill(Param("positive_unitball"), &blob);
  const int row_size = blob.count(1);
  for (int row = 0; row < blob.shape(0); ++row) {
    double sum = 0;
    for (int i = 0; i < row_size; ++i) {
      const TypeParam value = blob.cpu_data()[row * row_size + i];
      EXPECT_GE(value, TypeParam(0));
      EXPECT_LE(value, TypeParam(1));
      sum += value;
    }
    EXPECT_NEAR(1.0, sum, 1e-5) << "row " << row;
  }
  // Uniform draws, normalised: the values are not all equal.
  EXPECT_GT(MomentsOf(blob).variance, 0.0);
}

// Fan sizes of the test blob {50, 40, 3, 3}: fan_in = 40 * 9, fan_out = 50 * 9.
constexpr double kFanIn = 360, kFanOut = 450;

double FanFor(FillerParameter::VarianceNorm norm) {
  switch (norm) {
    case FillerParameter::FAN_OUT:
      return kFanOut;
    case FillerParameter::AVERAGE:
      return (kFanIn + kFanOut) / 2;
    default:
      return kFanIn;
  }
}

const FillerParameter::VarianceNorm kVarianceNorms[] = {
    FillerParameter::FAN_IN, FillerParameter::FAN_OUT, FillerParameter::AVERAGE};

template <typename Dtype>
class FillerXavierTest : public ::testing::Test {};
TYPED_TEST_SUITE(FillerXavierTest, TestDtypes);

TYPED_TEST(FillerXavierTest, BoundsAndVariancePerVarianceNorm) {
  for (const auto norm : kVarianceNorms) {
    SCOPED_TRACE(FillerParameter::VarianceNorm_Name(norm));
    Blob<TypeParam> blob(50, 40, 3, 3);
    FillerParameter param = Param("xavier");
    param.set_variance_norm(norm);
    Fill(param, &blob);
    const double n = FanFor(norm);
    const double bound = std::sqrt(3 / n);
    double largest = 0;
    for (int i = 0; i < blob.count(); ++i) {
      const double value = blob.cpu_data()[i];
      ASSERT_GE(value, -bound);
      ASSERT_LT(value, bound);
      largest = std::max(largest, std::abs(value));
    }
    EXPECT_GT(largest, 0.99 * bound);
    const Moments moments = MomentsOf(blob);
    EXPECT_NEAR(0, moments.mean, 0.05 * bound);
    EXPECT_NEAR(1 / n, moments.variance, 0.08 / n);
  }
}

// A bias blob (one axis) is filled as Caffe does: fan_in 1, fan_out = count.
TYPED_TEST(FillerXavierTest, OneAxisBlobUsesCountAsFanOut) {
  Blob<TypeParam> bias(std::vector<int>{100});
  FillerParameter param = Param("xavier");
  param.set_variance_norm(FillerParameter::FAN_OUT);
  Fill(param, &bias);
  const TypeParam bound = std::sqrt(TypeParam(3) / TypeParam(100));
  for (int i = 0; i < bias.count(); ++i) {
    EXPECT_GE(bias.cpu_data()[i], -bound);
    EXPECT_LT(bias.cpu_data()[i], bound);
  }
}

TYPED_TEST(FillerXavierTest, NeedsAnAxis) {
  Blob<TypeParam> blob(std::vector<int>{});
  const std::string message = ErrorMessage([&] { Fill(Param("xavier"), &blob); });
  EXPECT_THAT(message, HasSubstr("xavier"));
  EXPECT_THAT(message, HasSubstr("axes"));
}

template <typename Dtype>
class FillerMSRATest : public ::testing::Test {};
TYPED_TEST_SUITE(FillerMSRATest, TestDtypes);

TYPED_TEST(FillerMSRATest, ZeroMeanAndVarianceTwoOverN) {
  for (const auto norm : kVarianceNorms) {
    SCOPED_TRACE(FillerParameter::VarianceNorm_Name(norm));
    Blob<TypeParam> blob(50, 40, 3, 3);
    FillerParameter param = Param("msra");
    param.set_variance_norm(norm);
    Fill(param, &blob);
    const double n = FanFor(norm);
    const Moments moments = MomentsOf(blob);
    EXPECT_NEAR(0, moments.mean, 0.05 * std::sqrt(2 / n));
    EXPECT_NEAR(2 / n, moments.variance, 0.08 * 2 / n);
  }
}

TYPED_TEST(FillerMSRATest, NeedsAnAxis) {
  Blob<TypeParam> blob(std::vector<int>{});
  EXPECT_THROW(Fill(Param("msra"), &blob), Error);
  EXPECT_THAT(ErrorMessage([&] { Fill(Param("msra"), &blob); }), HasSubstr("msra"));
}

template <typename Dtype>
class FillerBilinearTest : public ::testing::Test {
 protected:
  void ExpectEveryKernelIs(const std::vector<double>& expected, const Blob<Dtype>& blob) {
    const int kernel_area = blob.count(2);
    ASSERT_EQ(static_cast<int>(expected.size()), kernel_area);
    for (int i = 0; i < blob.count(); ++i) {
      EXPECT_NEAR(expected[i % kernel_area], blob.cpu_data()[i], 1e-7) << "at " << i;
    }
  }
};
TYPED_TEST_SUITE(FillerBilinearTest, TestDtypes);

TYPED_TEST(FillerBilinearTest, KernelFour) {
  // f = 2, c = 3/4: the 1-D tent is (1/4, 3/4, 3/4, 1/4).
  Blob<TypeParam> blob(3, 2, 4, 4);
  Fill(Param("bilinear"), &blob);
  this->ExpectEveryKernelIs({0.0625, 0.1875, 0.1875, 0.0625,  //
                             0.1875, 0.5625, 0.5625, 0.1875,  //
                             0.1875, 0.5625, 0.5625, 0.1875,  //
                             0.0625, 0.1875, 0.1875, 0.0625},
                            blob);
}

TYPED_TEST(FillerBilinearTest, KernelThree) {
  // f = 2, c = 1/2: the 1-D tent is (1/2, 1, 1/2), centred on the middle tap.
  Blob<TypeParam> blob(2, 1, 3, 3);
  Fill(Param("bilinear"), &blob);
  this->ExpectEveryKernelIs({0.25, 0.5, 0.25,  //
                             0.5, 1.0, 0.5,    //
                             0.25, 0.5, 0.25},
                            blob);
}

TYPED_TEST(FillerBilinearTest, NeedsASquareKernel) {
  Blob<TypeParam> blob(1, 1, 3, 4);
  EXPECT_THROW(Fill(Param("bilinear"), &blob), Error);
  EXPECT_THAT(ErrorMessage([&] { Fill(Param("bilinear"), &blob); }), HasSubstr("square"));
}

TYPED_TEST(FillerBilinearTest, NeedsFourAxes) {
  Blob<TypeParam> blob({4, 4, 4});
  EXPECT_THROW(Fill(Param("bilinear"), &blob), Error);
  EXPECT_THAT(ErrorMessage([&] { Fill(Param("bilinear"), &blob); }), HasSubstr("4-D"));
}

template <typename Dtype>
class FillerFactoryTest : public ::testing::Test {};
TYPED_TEST_SUITE(FillerFactoryTest, TestDtypes);

TYPED_TEST(FillerFactoryTest, KnowsEveryCaffeType) {
  for (const char* type :
       {"constant", "uniform", "gaussian", "positive_unitball", "xavier", "msra", "bilinear"}) {
    SCOPED_TRACE(type);
    std::unique_ptr<Filler<TypeParam>> filler = GetFiller<TypeParam>(Param(type));
    ASSERT_NE(nullptr, filler);
    Blob<TypeParam> blob(2, 3, 4, 4);
    EXPECT_NO_THROW(filler->Fill(&blob));
  }
}

TYPED_TEST(FillerFactoryTest, UnknownTypeNamesItAndListsTheKnownOnes) {
  EXPECT_THROW(GetFiller<TypeParam>(Param("gausian")), Error);
  const std::string message = ErrorMessage([] { GetFiller<TypeParam>(Param("gausian")); });
  EXPECT_THAT(message, HasSubstr("'gausian'"));
  for (const char* type :
       {"constant", "uniform", "gaussian", "positive_unitball", "xavier", "msra", "bilinear"}) {
    EXPECT_THAT(message, HasSubstr(type));
  }
}

TYPED_TEST(FillerFactoryTest, SparseOnlyWithGaussian) {
  Blob<TypeParam> blob({4, 5});
  FillerParameter param = Param("uniform");
  param.set_sparse(2);
  const std::string message = ErrorMessage([&] { Fill(param, &blob); });
  EXPECT_THAT(message, HasSubstr("uniform"));
  EXPECT_THAT(message, HasSubstr("sparse"));
}

}  // namespace
}  // namespace crema
