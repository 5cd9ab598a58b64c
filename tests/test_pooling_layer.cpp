// Pooling: MAX, AVE and STOCHASTIC values by hand (with padding, ties and the
// argmax top), Caffe's output sizes, global pooling, gradients against finite
// differences, and configuration errors, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/pooling_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename Dtype>
void ExpectValues(const std::vector<double>& expected, const Blob<Dtype>& blob,
                  double tolerance = 1e-6) {
  ASSERT_EQ(static_cast<int>(expected.size()), blob.count());
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_NEAR(blob.cpu_data()[i], expected[i], tolerance) << "element " << i;
  }
}

// Distinct values (a shuffled 0.1-spaced ramp), so no window holds a near-tie
// that a finite-difference step could flip.
template <typename Dtype>
void FillWithSpreadPermutation(Blob<Dtype>* blob, unsigned seed) {
  std::vector<int> order(blob->count());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  for (int i = 0; i < blob->count(); ++i) {
    blob->mutable_cpu_data()[i] = Dtype(0.1) * order[i] - Dtype(0.05) * blob->count();
  }
}

LayerParameter PoolingParam(PoolingParameter::PoolMethod pool, int kernel, int stride,
                            int pad = 0) {
  LayerParameter param;
  param.set_name("pool1");
  PoolingParameter* pooling = param.mutable_pooling_param();
  pooling->set_pool(pool);
  pooling->set_kernel_size(kernel);
  pooling->set_stride(stride);
  if (pad > 0) pooling->set_pad(pad);
  return param;
}

template <typename TypeParam>
class PoolingLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  PoolingLayerTest()
      : bottom_(new Blob<Dtype>(2, 3, 4, 5)), top_(new Blob<Dtype>()), mask_(new Blob<Dtype>()) {
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }

  // Runs one forward pass of a layer built from param on the given plane(s).
  void Forward(const LayerParameter& param, const std::vector<int>& shape,
               const std::vector<double>& input, bool with_mask = false) {
    bottom_->Reshape(shape);
    SetValues(bottom_.get(), input);
    if (with_mask) top_vec_.push_back(mask_.get());
    layer_.reset(new PoolingLayer<Dtype>(param));
    layer_->SetUp(bottom_vec_, top_vec_);
    layer_->Forward(bottom_vec_, top_vec_);
  }

  void ExpectSetUpError(const LayerParameter& param, const std::string& fragment) {
    PoolingLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec_, top_vec_);
      FAIL() << "expected an error mentioning '" << fragment << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("pool1"), std::string::npos) << message;
      EXPECT_NE(message.find("Pooling"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  std::unique_ptr<Blob<Dtype>> bottom_, top_, mask_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
  std::unique_ptr<PoolingLayer<Dtype>> layer_;
};
TYPED_TEST_SUITE(PoolingLayerTest, TestDtypesAndDevices);

// 3x5 plane with ties: (0,2) and (1,3) both hold 5, and so do (1,3) and (2,2).
const std::vector<double> kTiedPlane = {1, 2, 5, 2, 3, 9, 4, 1, 5, 8, 1, 2, 5, 2, 3};

TYPED_TEST(PoolingLayerTest, MaxByHandTiesGoToTheFirst) {
  std::vector<double> input = kTiedPlane;
  for (double v : kTiedPlane) input.push_back(v + 10);  // a second channel
  this->Forward(PoolingParam(PoolingParameter::MAX, 2, 1), {1, 2, 3, 5}, input, true);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 2, 2, 4}));
  ExpectValues({9, 5, 5, 8, 9, 5, 5, 8, 19, 15, 15, 18, 19, 15, 15, 18}, *this->top_);
  ExpectValues({5, 2, 2, 9, 5, 12, 8, 9, 5, 2, 2, 9, 5, 12, 8, 9}, *this->mask_);
}

TYPED_TEST(PoolingLayerTest, MaxPaddedByHand) {
  const std::vector<double> plane = {1, 2, 4, 2, 3, 2, 4, 2, 1};
  this->Forward(PoolingParam(PoolingParameter::MAX, 3, 2, 1), {1, 1, 3, 3}, plane, true);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 2, 2}));
  ExpectValues({3, 4, 4, 3}, *this->top_);
  ExpectValues({4, 2, 6, 4}, *this->mask_);

  // Padding never wins, even over negative values.
  std::vector<double> negated;
  for (double v : plane) negated.push_back(-v);
  this->top_vec_.pop_back();
  this->Forward(PoolingParam(PoolingParameter::MAX, 3, 2, 1), {1, 1, 3, 3}, negated, true);
  ExpectValues({-1, -2, -2, -1}, *this->top_);
  ExpectValues({0, 1, 3, 8}, *this->mask_);
}

// 1..15 in a 3x5 plane; kernel 2, stride 2 rounds up to 2x3 windows, the last
// row and column clipped to the image.
const std::vector<double> kRamp = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

TYPED_TEST(PoolingLayerTest, MaxAndAveClippedWindowsByHand) {
  this->Forward(PoolingParam(PoolingParameter::MAX, 2, 2), {1, 1, 3, 5}, kRamp, true);
  ExpectValues({7, 9, 10, 12, 14, 15}, *this->top_);
  ExpectValues({6, 8, 9, 11, 13, 14}, *this->mask_);
  this->top_vec_.pop_back();
  this->Forward(PoolingParam(PoolingParameter::AVE, 2, 2), {1, 1, 3, 5}, kRamp);
  ExpectValues({4, 6, 7.5, 11.5, 13.5, 15}, *this->top_);

  LayerParameter floor = PoolingParam(PoolingParameter::AVE, 2, 2);
  floor.mutable_pooling_param()->set_round_mode(PoolingParameter::FLOOR);
  this->Forward(floor, {1, 1, 3, 5}, kRamp);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 1, 2}));
  ExpectValues({4, 6}, *this->top_);
}

// MAX on random planes against windows scanned here, for geometries whose
// windows are wholly inside, cut by padding, or cut by a rounded-up output
// size, at thread budgets that split the planes differently; values drawn
// from few levels make ties, which go to the first position in row-major order.
TYPED_TEST(PoolingLayerTest, MaxMatchesScannedWindowsOnRandomPlanes) {
  using Dtype = typename TypeParam::Dtype;
  struct Geometry {
    int kernel, stride, pad, height, width;
  };
  // The last three are narrower or lower than the kernel (found by fuzzing:
  // a 1-wide plane under a 2x2 kernel read past the plane).
  const Geometry geometries[] = {{2, 2, 0, 24, 24}, {3, 2, 0, 13, 13}, {3, 2, 1, 11, 9},
                                 {3, 1, 1, 7, 8},   {2, 3, 0, 10, 11}, {4, 3, 1, 12, 13},
                                 {2, 2, 0, 8, 1},   {3, 2, 0, 9, 2},   {3, 2, 0, 2, 9}};
  std::mt19937 random(7);
  std::uniform_int_distribution<int> level(-4, 4);
  for (int budget : {1, 2, 3}) {
    ScopedThreadBudget scoped(budget);
    for (const Geometry& g : geometries) {
      SCOPED_TRACE(testing::Message()
                   << "budget " << budget << ", kernel " << g.kernel << ", stride " << g.stride
                   << ", pad " << g.pad << ", " << g.height << "x" << g.width);
      const std::vector<int> shape{3, 4, g.height, g.width};
      std::vector<double> input(3 * 4 * g.height * g.width);
      for (double& value : input) value = level(random) / 4.0;
      this->top_vec_.resize(1);
      this->Forward(PoolingParam(PoolingParameter::MAX, g.kernel, g.stride, g.pad), shape, input,
                    true);
      const Blob<Dtype>& top = *this->top_;
      const Blob<Dtype>& mask = *this->mask_;
      const int pooled_h = top.height(), pooled_w = top.width();
      for (int plane = 0; plane < 12; ++plane) {
        const double* in = input.data() + plane * g.height * g.width;
        for (int ph = 0; ph < pooled_h; ++ph) {
          for (int pw = 0; pw < pooled_w; ++pw) {
            int best = -1;
            for (int h = std::max(ph * g.stride - g.pad, 0);
                 h < std::min(ph * g.stride - g.pad + g.kernel, g.height); ++h) {
              for (int w = std::max(pw * g.stride - g.pad, 0);
                   w < std::min(pw * g.stride - g.pad + g.kernel, g.width); ++w) {
                if (best < 0 || in[h * g.width + w] > in[best]) best = h * g.width + w;
              }
            }
            const int out = (plane * pooled_h + ph) * pooled_w + pw;
            ASSERT_EQ(mask.cpu_data()[out], best) << "plane " << plane << " at " << ph << "," << pw;
            ASSERT_EQ(top.cpu_data()[out], Dtype(in[best]));
          }
        }
      }
    }
  }
}

TYPED_TEST(PoolingLayerTest, AvePaddedByHand) {
  // The divisor counts padded positions: 9 everywhere.
  this->Forward(PoolingParam(PoolingParameter::AVE, 3, 1, 1), {1, 1, 3, 3},
                std::vector<double>(9, 2.0));
  ExpectValues({8. / 9, 4. / 3, 8. / 9, 4. / 3, 2, 4. / 3, 8. / 9, 4. / 3, 8. / 9}, *this->top_);

  // ...but only up to the end of the padding: the last window [3, 6) of a
  // width-4 row padded by 1 has divisor 2.
  LayerParameter param;
  param.set_name("pool1");
  PoolingParameter* pooling = param.mutable_pooling_param();
  pooling->set_pool(PoolingParameter::AVE);
  pooling->set_kernel_h(1);
  pooling->set_kernel_w(3);
  pooling->set_stride_h(1);
  pooling->set_stride_w(2);
  pooling->set_pad_h(0);
  pooling->set_pad_w(1);
  this->Forward(param, {1, 1, 1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 1, 3}));
  ExpectValues({1, 3, 2}, *this->top_);
}

TYPED_TEST(PoolingLayerTest, OutputSizesRoundUpOrDown) {
  using Dtype = typename TypeParam::Dtype;
  struct Case {
    int input, kernel, stride, pad;
    PoolingParameter::RoundMode mode;
    int expected;
  };
  const Case cases[] = {
      {6, 3, 2, 0, PoolingParameter::CEIL, 3},
      {6, 3, 2, 0, PoolingParameter::FLOOR, 2},
      {7, 3, 3, 0, PoolingParameter::CEIL, 3},
      {7, 3, 3, 0, PoolingParameter::FLOOR, 2},
      {5, 3, 2, 1, PoolingParameter::CEIL, 3},
      {5, 3, 2, 1, PoolingParameter::FLOOR, 3},
      // A last window starting in the padding is dropped.
      {5, 2, 2, 1, PoolingParameter::CEIL, 3},
      {4, 2, 3, 1, PoolingParameter::CEIL, 2},
      {4, 2, 3, 1, PoolingParameter::FLOOR, 2},
      {3, 3, 1, 0, PoolingParameter::CEIL, 1},
  };
  for (const Case& c : cases) {
    LayerParameter param = PoolingParam(PoolingParameter::MAX, c.kernel, c.stride, c.pad);
    param.mutable_pooling_param()->set_round_mode(c.mode);
    Blob<Dtype> bottom(2, 3, c.input, c.input), top;
    std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
    PoolingLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec, top_vec);
    EXPECT_EQ(top.shape(), (std::vector<int>{2, 3, c.expected, c.expected}))
        << "input " << c.input << " kernel " << c.kernel << " stride " << c.stride << " pad "
        << c.pad << (c.mode == PoolingParameter::CEIL ? " CEIL" : " FLOOR");
  }
}

// OpenCV's ceil_mode (opencv-caffe.proto): false rounds down as round_mode
// FLOOR, true up as CEIL, for every case above; with round_mode given too,
// the two must agree.
TYPED_TEST(PoolingLayerTest, OpenCvCeilModeIsRoundMode) {
  using Dtype = typename TypeParam::Dtype;
  for (const bool ceil : {false, true}) {
    for (const int pad : {0, 1}) {
      LayerParameter by_round = PoolingParam(PoolingParameter::MAX, 3, 2, pad);
      by_round.mutable_pooling_param()->set_round_mode(ceil ? PoolingParameter::CEIL
                                                            : PoolingParameter::FLOOR);
      LayerParameter by_ceil = PoolingParam(PoolingParameter::MAX, 3, 2, pad);
      by_ceil.mutable_pooling_param()->set_ceil_mode(ceil);
      Blob<Dtype> bottom(1, 2, 6, 6), top_round, top_ceil;
      std::vector<Blob<Dtype>*> bottom_vec{&bottom}, round_vec{&top_round}, ceil_vec{&top_ceil};
      PoolingLayer<Dtype> round_layer(by_round), ceil_layer(by_ceil);
      round_layer.SetUp(bottom_vec, round_vec);
      ceil_layer.SetUp(bottom_vec, ceil_vec);
      EXPECT_EQ(top_ceil.shape(), top_round.shape()) << "ceil_mode " << ceil << " pad " << pad;
    }
  }
  // 6 wide, kernel 3, stride 2: FLOOR gives 2, CEIL 3.
  LayerParameter floor = PoolingParam(PoolingParameter::MAX, 3, 2);
  floor.mutable_pooling_param()->set_ceil_mode(false);
  Blob<Dtype> bottom(1, 1, 6, 6), top;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  PoolingLayer<Dtype> layer(floor);
  layer.SetUp(bottom_vec, top_vec);
  EXPECT_EQ(top.shape(), (std::vector<int>{1, 1, 2, 2}));
  LayerParameter both = floor;
  both.mutable_pooling_param()->set_round_mode(PoolingParameter::CEIL);
  PoolingLayer<Dtype> contradicted(both);
  ExpectSetUpThrowsNamingLayer<Dtype>(&contradicted, bottom_vec, top_vec);
}

TYPED_TEST(PoolingLayerTest, GlobalPoolingTakesTheWholePlane) {
  using Dtype = typename TypeParam::Dtype;
  FillWithSpreadPermutation(this->bottom_.get(), 5);
  for (auto pool : {PoolingParameter::MAX, PoolingParameter::AVE}) {
    LayerParameter param;
    param.set_name("pool1");
    param.mutable_pooling_param()->set_pool(pool);
    param.mutable_pooling_param()->set_global_pooling(true);
    PoolingLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    ASSERT_EQ(this->top_->shape(), (std::vector<int>{2, 3, 1, 1}));
    for (int plane = 0; plane < 6; ++plane) {
      const Dtype* begin = this->bottom_->cpu_data() + plane * 20;
      const double expected = pool == PoolingParameter::MAX
                                  ? *std::max_element(begin, begin + 20)
                                  : std::accumulate(begin, begin + 20, 0.0) / 20;
      EXPECT_NEAR(this->top_->cpu_data()[plane], expected, 1e-5) << "plane " << plane;
    }
  }
}

// Without padding, a rounded-up last window may start past the image (Caffe
// keeps it in the shape); it holds no input, so it gives 0 and no gradient.
TYPED_TEST(PoolingLayerTest, WindowPastTheImageGivesZero) {
  const std::vector<double> row = {-1, -2, -3, -4, -5};
  this->Forward(PoolingParam(PoolingParameter::MAX, 1, 3), {1, 1, 1, 5}, row, true);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 1, 3}));
  ExpectValues({-1, -4, 0}, *this->top_);
  ExpectValues({0, 3, -1}, *this->mask_);
  std::fill_n(this->top_->mutable_cpu_diff(), 3, 1);
  this->layer_->Backward(this->top_vec_, {true}, this->bottom_vec_);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(this->bottom_->cpu_diff()[i], i % 3 == 0 ? 1 : 0) << "element " << i;
  }

  this->top_vec_.pop_back();
  this->Forward(PoolingParam(PoolingParameter::AVE, 1, 3), {1, 1, 1, 5}, row);
  ExpectValues({-1, -4, 0}, *this->top_);
}

TYPED_TEST(PoolingLayerTest, GradientMax) {
  using Dtype = typename TypeParam::Dtype;
  FillWithSpreadPermutation(this->bottom_.get(), 1);
  PoolingLayer<Dtype> layer(PoolingParam(PoolingParameter::MAX, 3, 2));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PoolingLayerTest, GradientMaxPaddedWithMaskTop) {
  using Dtype = typename TypeParam::Dtype;
  FillWithSpreadPermutation(this->bottom_.get(), 2);
  this->top_vec_.push_back(this->mask_.get());
  PoolingLayer<Dtype> layer(PoolingParam(PoolingParameter::MAX, 3, 2, 1));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PoolingLayerTest, GradientAve) {
  using Dtype = typename TypeParam::Dtype;
  FillerParameter filler;
  filler.set_type("gaussian");
  GetFiller<Dtype>(filler)->Fill(this->bottom_.get());
  PoolingLayer<Dtype> layer(PoolingParam(PoolingParameter::AVE, 3, 2));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PoolingLayerTest, GradientAvePadded) {
  using Dtype = typename TypeParam::Dtype;
  FillerParameter filler;
  filler.set_type("gaussian");
  GetFiller<Dtype>(filler)->Fill(this->bottom_.get());
  for (int pad : {1, 2}) {
    PoolingLayer<Dtype> layer(PoolingParam(PoolingParameter::AVE, 3, 2, pad));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(PoolingLayerTest, GradientAveRectangular) {
  using Dtype = typename TypeParam::Dtype;
  FillerParameter filler;
  filler.set_type("gaussian");
  GetFiller<Dtype>(filler)->Fill(this->bottom_.get());
  LayerParameter param;
  PoolingParameter* pooling = param.mutable_pooling_param();
  pooling->set_pool(PoolingParameter::AVE);
  pooling->set_kernel_h(2);
  pooling->set_kernel_w(3);
  pooling->set_stride_h(1);
  pooling->set_stride_w(2);
  pooling->set_pad_h(1);
  pooling->set_pad_w(1);
  PoolingLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PoolingLayerTest, StochasticTrainPicksAnElementOfTheWindow) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  FillerParameter filler;
  filler.set_type("uniform");
  filler.set_min(0.1);
  filler.set_max(1);
  GetFiller<Dtype>(filler)->Fill(this->bottom_.get());
  LayerParameter param = PoolingParam(PoolingParameter::STOCHASTIC, 3, 2);
  param.set_phase(TRAIN);
  PoolingLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_->shape(), (std::vector<int>{2, 3, 2, 2}));
  for (int plane = 0; plane < 6; ++plane) {
    for (int ph = 0; ph < 2; ++ph) {
      for (int pw = 0; pw < 2; ++pw) {
        const Dtype value = this->top_->data_at(plane / 3, plane % 3, ph, pw);
        bool found = false;
        for (int h = 2 * ph; h < std::min(2 * ph + 3, 4); ++h) {
          for (int w = 2 * pw; w < std::min(2 * pw + 3, 5); ++w) {
            found |= this->bottom_->data_at(plane / 3, plane % 3, h, w) == value;
          }
        }
        EXPECT_TRUE(found) << "plane " << plane << " output (" << ph << ", " << pw << ")";
      }
    }
  }
}

// Zero-valued positions have probability 0: a window with one positive value
// always yields it.
TYPED_TEST(PoolingLayerTest, StochasticTrainNeverPicksZeros) {
  LayerParameter param = PoolingParam(PoolingParameter::STOCHASTIC, 2, 2);
  param.set_phase(TRAIN);
  const std::vector<double> plane = {0, 0, 0, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 4, 0};
  for (int seed = 0; seed < 5; ++seed) {
    Context::set_random_seed(seed);
    this->Forward(param, {1, 1, 4, 4}, plane);
    ExpectValues({1, 3, 2, 4}, *this->top_);
  }
}

// Over 2000 windows holding (1, 3), the 3 is picked about 3/4 of the time
// (the standard deviation of the fraction is about 0.01).
TYPED_TEST(PoolingLayerTest, StochasticTrainPicksInProportionToValue) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  const int windows = 2000;
  this->bottom_->Reshape(1, windows, 1, 2);
  for (int i = 0; i < windows; ++i) {
    this->bottom_->mutable_cpu_data()[2 * i] = 1;
    this->bottom_->mutable_cpu_data()[2 * i + 1] = 3;
  }
  LayerParameter param;
  param.set_phase(TRAIN);
  PoolingParameter* pooling = param.mutable_pooling_param();
  pooling->set_pool(PoolingParameter::STOCHASTIC);
  pooling->set_kernel_h(1);
  pooling->set_kernel_w(2);
  PoolingLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_->count(), windows);
  int threes = 0;
  for (int i = 0; i < windows; ++i) {
    const Dtype value = this->top_->cpu_data()[i];
    ASSERT_TRUE(value == 1 || value == 3) << value;
    threes += value == 3;
  }
  EXPECT_NEAR(static_cast<double>(threes) / windows, 0.75, 0.05);
}

TYPED_TEST(PoolingLayerTest, StochasticTestByHand) {
  LayerParameter param = PoolingParam(PoolingParameter::STOCHASTIC, 2, 2);
  param.set_phase(TEST);
  this->Forward(param, {1, 1, 3, 5}, kRamp);
  ExpectValues({90. / 16, 170. / 24, 125. / 15, 265. / 23, 365. / 27, 15}, *this->top_, 1e-5);
}

TYPED_TEST(PoolingLayerTest, GradientStochasticTrain) {
  using Dtype = typename TypeParam::Dtype;
  Context::set_random_seed(1701);
  this->bottom_->Reshape(1, 2, 4, 5);
  FillerParameter filler;
  filler.set_type("uniform");
  filler.set_min(0.1);
  filler.set_max(1);
  GetFiller<Dtype>(filler)->Fill(this->bottom_.get());
  LayerParameter param = PoolingParam(PoolingParameter::STOCHASTIC, 3, 2);
  param.set_phase(TRAIN);
  PoolingLayer<Dtype> layer(param);
  // A small step (and few elements), so the fixed draws keep picking the same
  // positions: a step moves the cumulative sums the draws are compared with.
  GradientChecker<Dtype> checker(1e-5, 1e-2);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PoolingLayerTest, StochasticBackwardAtTestThrows) {
  LayerParameter param = PoolingParam(PoolingParameter::STOCHASTIC, 2, 2);
  param.set_phase(TEST);
  this->Forward(param, {1, 1, 3, 5}, kRamp);
  EXPECT_THROW(this->layer_->Backward(this->top_vec_, {true}, this->bottom_vec_), Error);
}

TYPED_TEST(PoolingLayerTest, BadConfigurationsNameTheLayer) {
  this->ExpectSetUpError(PoolingParam(PoolingParameter::MAX, 2, 1, 2), "pad must be smaller");
  this->ExpectSetUpError(PoolingParam(PoolingParameter::AVE, 3, 0), "stride must be positive");
  this->ExpectSetUpError(PoolingParam(PoolingParameter::MAX, 0, 1), "kernel must be positive");
  this->ExpectSetUpError(PoolingParam(PoolingParameter::STOCHASTIC, 3, 1, 1),
                         "MAX and AVE pooling only");

  LayerParameter both = PoolingParam(PoolingParameter::MAX, 2, 1);
  both.mutable_pooling_param()->set_kernel_h(2);
  this->ExpectSetUpError(both, "kernel_size");
  LayerParameter half = PoolingParam(PoolingParameter::MAX, 2, 1);
  half.mutable_pooling_param()->clear_kernel_size();
  half.mutable_pooling_param()->set_kernel_h(2);
  this->ExpectSetUpError(half, "kernel_w");

  LayerParameter global = PoolingParam(PoolingParameter::MAX, 2, 1);
  global.mutable_pooling_param()->set_global_pooling(true);
  this->ExpectSetUpError(global, "global_pooling");

  this->ExpectSetUpError(PoolingParam(PoolingParameter::MAX, 7, 1), "does not fit");

  this->bottom_->Reshape(std::vector<int>{2, 3, 4});
  this->ExpectSetUpError(PoolingParam(PoolingParameter::MAX, 2, 1), "4-D bottom");
}

TYPED_TEST(PoolingLayerTest, MaskTopOnlyForMax) {
  using Dtype = typename TypeParam::Dtype;
  this->top_vec_.push_back(this->mask_.get());
  PoolingLayer<Dtype> layer(PoolingParam(PoolingParameter::AVE, 2, 1));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

TYPED_TEST(PoolingLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = PoolingParam(PoolingParameter::MAX, 2, 1);
  param.set_type("Pooling");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Pooling");
}

}  // namespace
}  // namespace crema
