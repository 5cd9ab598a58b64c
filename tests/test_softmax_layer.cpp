// Softmax: values by hand (also at extreme inputs), a naive reference on a
// 4-D blob along several axes, in place, gradients, and a bad axis.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "crema/layers/softmax_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename Dtype>
void FillSeededGaussian(Blob<Dtype>* blob, unsigned seed, double stddev = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> gaussian(0.0, stddev);
  for (int i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = Dtype(gaussian(rng));
}

template <typename TypeParam>
class SoftmaxLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  SoftmaxLayerTest() : bottom_(new Blob<Dtype>(2, 3, 2, 3)), top_(new Blob<Dtype>()) {
    FillSeededGaussian(bottom_.get(), 1701);
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }
  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(SoftmaxLayerTest, TestDtypesAndDevices);

TYPED_TEST(SoftmaxLayerTest, ForwardByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3}), top;
  const Dtype input[] = {1, 2, 3, 0, 0, 0};
  std::copy(input, input + 6, bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  SoftmaxLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), bottom.shape());
  const double sum = std::exp(1.) + std::exp(2.) + std::exp(3.);
  const double expected[] = {
      std::exp(1.) / sum, std::exp(2.) / sum, std::exp(3.) / sum, 1. / 3, 1. / 3, 1. / 3};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
}

// exp(1000) overflows even a double: only the max-shifted form gets these right.
TYPED_TEST(SoftmaxLayerTest, StableOnLargeInputs) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 2}), top;
  const Dtype input[] = {1000, 1001, -1000, -1001};
  std::copy(input, input + 4, bottom.mutable_cpu_data());
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  SoftmaxLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const double low = 1 / (1 + std::exp(1.));  // e^0 / (e^0 + e^1)
  const double expected[] = {low, 1 - low, 1 - low, low};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
}

// Softmax over axis 1 of a (2, 3, 2, 3) blob: every (n, h, w) position has its
// own distribution over the 3 channels.
TYPED_TEST(SoftmaxLayerTest, ForwardMatchesNaiveReference) {
  using Dtype = typename TypeParam::Dtype;
  for (int axis : {0, 1, 2, -1}) {
    LayerParameter param;
    param.mutable_softmax_param()->set_axis(axis);
    SoftmaxLayer<Dtype> layer(param);
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    const Blob<Dtype>& bottom = *this->bottom_;
    const int softmax_axis = bottom.CanonicalAxisIndex(axis);
    const int channels = bottom.shape(softmax_axis);
    for (int n = 0; n < 2; ++n) {
      for (int c = 0; c < 3; ++c) {
        for (int h = 0; h < 2; ++h) {
          for (int w = 0; w < 3; ++w) {
            std::vector<int> index{n, c, h, w};
            double sum = 0;
            for (int k = 0; k < channels; ++k) {
              std::vector<int> other = index;
              other[softmax_axis] = k;
              sum += std::exp(double(bottom.data_at(other)));
            }
            const double expected = std::exp(double(bottom.data_at(index))) / sum;
            EXPECT_NEAR(this->top_->data_at(index), expected, 1e-6)
                << "axis " << axis << " at " << n << c << h << w;
          }
        }
      }
    }
  }
}

TYPED_TEST(SoftmaxLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayer<Dtype> layer{LayerParameter()};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> in_place;
  in_place.CopyFrom(*this->bottom_, false, true);
  std::vector<Blob<Dtype>*> in_place_vec{&in_place};
  SoftmaxLayer<Dtype> layer_in_place{LayerParameter()};
  layer_in_place.SetUp(in_place_vec, in_place_vec);
  layer_in_place.Forward(in_place_vec, in_place_vec);
  for (int i = 0; i < in_place.count(); ++i) {
    EXPECT_NEAR(in_place.cpu_data()[i], this->top_->cpu_data()[i], 1e-7) << i;
  }
}

TYPED_TEST(SoftmaxLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayer<Dtype> layer{LayerParameter()};
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SoftmaxLayerTest, GradientAlongLastAxis) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_softmax_param()->set_axis(-1);
  SoftmaxLayer<Dtype> layer(param);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SoftmaxLayerTest, AxisOutOfRangeNamesTheLayer) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_name("prob");
  param.mutable_softmax_param()->set_axis(4);
  SoftmaxLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "axis 4 of a 4-D blob must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prob"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Softmax"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("axis 4"), std::string::npos) << e.what();
  }
}

TYPED_TEST(SoftmaxLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.set_type("Softmax");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "Softmax");
}

}  // namespace
}  // namespace crema
