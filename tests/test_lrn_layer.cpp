// LRN: a tiny case by hand, both regions against a naive reference loop,
// gradients against finite differences, and configuration errors, on every
// device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/lrn_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

// The definition, one element at a time, in double.
template <typename Dtype>
std::vector<double> ReferenceLRN(const Blob<Dtype>& bottom, const LRNParameter& param) {
  const int half = static_cast<int>(param.local_size()) / 2;
  const double size = param.local_size();
  std::vector<double> result;
  for (int n = 0; n < bottom.num(); ++n) {
    for (int c = 0; c < bottom.channels(); ++c) {
      for (int h = 0; h < bottom.height(); ++h) {
        for (int w = 0; w < bottom.width(); ++w) {
          double sum_of_squares = 0;
          double scale;
          if (param.norm_region() == LRNParameter::ACROSS_CHANNELS) {
            for (int other = c - half; other <= c + half; ++other) {
              if (other < 0 || other >= bottom.channels()) continue;
              const double x = bottom.data_at(n, other, h, w);
              sum_of_squares += x * x;
            }
            scale = param.k() + param.alpha() / size * sum_of_squares;
          } else {
            for (int y = h - half; y <= h + half; ++y) {
              for (int x = w - half; x <= w + half; ++x) {
                if (y < 0 || y >= bottom.height() || x < 0 || x >= bottom.width()) continue;
                const double value = bottom.data_at(n, c, y, x);
                sum_of_squares += value * value;
              }
            }
            scale = 1 + param.alpha() / (size * size) * sum_of_squares;
          }
          result.push_back(bottom.data_at(n, c, h, w) * std::pow(scale, -param.beta()));
        }
      }
    }
  }
  return result;
}

template <typename TypeParam>
class LRNLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  LRNLayerTest() : bottom_(new Blob<Dtype>(2, 7, 3, 3)), top_(new Blob<Dtype>()) {
    Context::set_random_seed(1701);
    FillerParameter filler;
    filler.set_type("gaussian");
    GetFiller<Dtype>(filler)->Fill(bottom_.get());
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
    param_.set_name("norm1");
  }

  void ExpectMatchesReference() {
    LRNLayer<Dtype> layer(param_);
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    ASSERT_EQ(top_->shape(), bottom_->shape());
    const std::vector<double> expected = ReferenceLRN(*bottom_, param_.lrn_param());
    for (int i = 0; i < top_->count(); ++i) {
      EXPECT_NEAR(top_->cpu_data()[i], expected[i], 1e-5 * std::max(1.0, std::fabs(expected[i])))
          << "element " << i;
    }
  }

  void ExpectSetUpError(const std::string& fragment) {
    LRNLayer<Dtype> layer(param_);
    try {
      layer.SetUp(bottom_vec_, top_vec_);
      FAIL() << "expected an error mentioning '" << fragment << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("norm1"), std::string::npos) << message;
      EXPECT_NE(message.find("LRN"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
  LayerParameter param_;
};
TYPED_TEST_SUITE(LRNLayerTest, TestDtypesAndDevices);

TYPED_TEST(LRNLayerTest, AcrossChannelsByHand) {
  using Dtype = typename TypeParam::Dtype;
  // x = (1, 2, 3) over channels, n = 3, alpha = 3 (alpha / n = 1), beta = 1, k = 1:
  // scales 1 + 5, 1 + 14, 1 + 13.
  Blob<Dtype> bottom(1, 3, 1, 1), top;
  for (int c = 0; c < 3; ++c) bottom.mutable_cpu_data()[c] = c + 1;
  std::vector<Blob<Dtype>*> bottom_vec{&bottom}, top_vec{&top};
  LRNParameter* lrn = this->param_.mutable_lrn_param();
  lrn->set_local_size(3);
  lrn->set_alpha(3);
  lrn->set_beta(1);
  LRNLayer<Dtype> layer(this->param_);
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_NEAR(top.cpu_data()[0], 1. / 6, 1e-6);
  EXPECT_NEAR(top.cpu_data()[1], 2. / 15, 1e-6);
  EXPECT_NEAR(top.cpu_data()[2], 3. / 14, 1e-6);
}

TYPED_TEST(LRNLayerTest, AcrossChannelsMatchesReference) {
  this->ExpectMatchesReference();
  LRNParameter* lrn = this->param_.mutable_lrn_param();
  lrn->set_local_size(3);
  lrn->set_alpha(2);
  lrn->set_beta(0.5);
  lrn->set_k(2);
  this->ExpectMatchesReference();
}

TYPED_TEST(LRNLayerTest, WithinChannelMatchesReference) {
  LRNParameter* lrn = this->param_.mutable_lrn_param();
  lrn->set_norm_region(LRNParameter::WITHIN_CHANNEL);
  lrn->set_local_size(3);
  this->ExpectMatchesReference();
  lrn->set_alpha(2);
  lrn->set_beta(0.5);
  lrn->set_k(5);  // unused within a channel, as in Caffe
  this->ExpectMatchesReference();
  // A window wider than the 3x3 plane.
  lrn->set_local_size(5);
  this->ExpectMatchesReference();
}

TYPED_TEST(LRNLayerTest, GradientAcrossChannels) {
  using Dtype = typename TypeParam::Dtype;
  LRNLayer<Dtype> layer(this->param_);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(LRNLayerTest, GradientAcrossChannelsLargeRegion) {
  using Dtype = typename TypeParam::Dtype;
  LRNParameter* lrn = this->param_.mutable_lrn_param();
  lrn->set_local_size(15);
  lrn->set_alpha(2);
  lrn->set_k(2);
  LRNLayer<Dtype> layer(this->param_);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(LRNLayerTest, GradientWithinChannel) {
  using Dtype = typename TypeParam::Dtype;
  LRNParameter* lrn = this->param_.mutable_lrn_param();
  lrn->set_norm_region(LRNParameter::WITHIN_CHANNEL);
  lrn->set_local_size(3);
  lrn->set_alpha(2);
  LRNLayer<Dtype> layer(this->param_);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(LRNLayerTest, BadConfigurationsNameTheLayer) {
  this->param_.mutable_lrn_param()->set_local_size(4);
  this->ExpectSetUpError("odd");
  this->param_.mutable_lrn_param()->set_local_size(0);
  this->ExpectSetUpError("odd");
  this->param_.mutable_lrn_param()->set_local_size(3);
  this->top_vec_[0] = this->bottom_.get();
  this->ExpectSetUpError("in place");
  this->top_vec_[0] = this->top_.get();
  this->bottom_->Reshape(std::vector<int>{2, 7, 9});
  this->ExpectSetUpError("4-D bottom");
}

TYPED_TEST(LRNLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  this->param_.set_type("LRN");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(this->param_)->type(), "LRN");
}

}  // namespace
}  // namespace crema
