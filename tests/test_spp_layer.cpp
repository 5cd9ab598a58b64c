// SPP: top shapes, values against pooling each level directly (and level 0
// against the plane's maximum), gradients against finite differences, and
// configuration errors, on every device.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/pooling_layer.hpp"
#include "crema/layers/spp_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter SPPParam(int pyramid_height, SPPParameter::PoolMethod pool) {
  LayerParameter param;
  param.set_name("spp5");
  param.mutable_spp_param()->set_pyramid_height(pyramid_height);
  param.mutable_spp_param()->set_pool(pool);
  return param;
}

// Level l as Caffe's SPP defines it: 2^l bins, kernel = stride = ceil(in / bins),
// the rounding excess padded about evenly.
LayerParameter LevelPoolingParam(int level, int height, int width,
                                 PoolingParameter::PoolMethod pool) {
  const int bins = 1 << level;
  const int kernel_h = (height + bins - 1) / bins, kernel_w = (width + bins - 1) / bins;
  LayerParameter param;
  PoolingParameter* pooling = param.mutable_pooling_param();
  pooling->set_pool(pool);
  pooling->set_kernel_h(kernel_h);
  pooling->set_kernel_w(kernel_w);
  pooling->set_stride_h(kernel_h);
  pooling->set_stride_w(kernel_w);
  pooling->set_pad_h((kernel_h * bins - height + 1) / 2);
  pooling->set_pad_w((kernel_w * bins - width + 1) / 2);
  return param;
}

template <typename TypeParam>
class SPPLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  SPPLayerTest() : bottom_(new Blob<Dtype>(2, 3, 9, 8)), top_(new Blob<Dtype>()) {
    FillSpread();
    bottom_vec_.push_back(bottom_.get());
    top_vec_.push_back(top_.get());
  }

  // Distinct, 0.1-spaced values: no near-ties for MAX under a finite step.
  void FillSpread() {
    std::vector<int> order(bottom_->count());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(3));
    for (int i = 0; i < bottom_->count(); ++i) {
      bottom_->mutable_cpu_data()[i] = Dtype(0.1) * order[i] - Dtype(0.05) * bottom_->count();
    }
  }

  // Each level's slice of every image's top row equals pooling that level directly.
  void ExpectMatchesDirectPooling(int pyramid_height, PoolingParameter::PoolMethod pool) {
    SPPLayer<Dtype> layer(
        SPPParam(pyramid_height, static_cast<SPPParameter::PoolMethod>(static_cast<int>(pool))));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    const int num = bottom_->num();
    const int image_size = top_->count() / num;
    int level_start = 0;
    for (int level = 0; level < pyramid_height; ++level) {
      PoolingLayer<Dtype> direct(
          LevelPoolingParam(level, bottom_->height(), bottom_->width(), pool));
      Blob<Dtype> pooled;
      std::vector<Blob<Dtype>*> pooled_vec{&pooled};
      direct.SetUp(bottom_vec_, pooled_vec);
      direct.Forward(bottom_vec_, pooled_vec);
      const int bins = 1 << level;
      ASSERT_EQ(pooled.shape(), (std::vector<int>{num, bottom_->channels(), bins, bins}));
      const int level_size = pooled.count(1);
      for (int n = 0; n < num; ++n) {
        for (int i = 0; i < level_size; ++i) {
          EXPECT_EQ(top_->cpu_data()[n * image_size + level_start + i],
                    pooled.cpu_data()[n * level_size + i])
              << "level " << level << " image " << n << " element " << i;
        }
      }
      level_start += level_size;
    }
    EXPECT_EQ(level_start, image_size);
  }

  void ExpectSetUpError(const LayerParameter& param, const std::string& fragment) {
    SPPLayer<Dtype> layer(param);
    try {
      layer.SetUp(bottom_vec_, top_vec_);
      FAIL() << "expected an error mentioning '" << fragment << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("spp5"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  std::unique_ptr<Blob<Dtype>> bottom_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
};
TYPED_TEST_SUITE(SPPLayerTest, TestDtypesAndDevices);

TYPED_TEST(SPPLayerTest, TopShape) {
  using Dtype = typename TypeParam::Dtype;
  const std::pair<int, std::vector<int>> cases[] = {
      {1, {2, 3, 1, 1}},  // one level keeps the pooled shape
      {2, {2, 3 * (1 + 4)}},
      {3, {2, 3 * (1 + 4 + 16)}},
  };
  for (const auto& c : cases) {
    SPPLayer<Dtype> layer(SPPParam(c.first, SPPParameter::MAX));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    EXPECT_EQ(this->top_->shape(), c.second) << "pyramid_height " << c.first;
  }
}

TYPED_TEST(SPPLayerTest, LevelZeroIsThePlaneMaximum) {
  using Dtype = typename TypeParam::Dtype;
  SPPLayer<Dtype> layer(SPPParam(2, SPPParameter::MAX));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      const Dtype* plane = this->bottom_->cpu_data() + this->bottom_->offset(n, c);
      EXPECT_EQ(this->top_->cpu_data()[n * 15 + c], *std::max_element(plane, plane + 72))
          << "image " << n << " channel " << c;
    }
  }
}

TYPED_TEST(SPPLayerTest, MaxMatchesDirectPooling) {
  this->ExpectMatchesDirectPooling(3, PoolingParameter::MAX);
}

TYPED_TEST(SPPLayerTest, AveMatchesDirectPooling) {
  this->ExpectMatchesDirectPooling(3, PoolingParameter::AVE);
}

TYPED_TEST(SPPLayerTest, FollowsAReshapedBottom) {
  using Dtype = typename TypeParam::Dtype;
  SPPLayer<Dtype> layer(SPPParam(2, SPPParameter::MAX));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_->Reshape(2, 3, 7, 6);
  this->FillSpread();
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 15}));
  this->ExpectMatchesDirectPooling(2, PoolingParameter::MAX);
}

TYPED_TEST(SPPLayerTest, GradientMax) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_->Reshape(2, 2, 7, 6);
  this->FillSpread();
  SPPLayer<Dtype> layer(SPPParam(3, SPPParameter::MAX));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SPPLayerTest, GradientAve) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_->Reshape(2, 2, 7, 6);
  FillerParameter filler;
  filler.set_type("gaussian");
  GetFiller<Dtype>(filler)->Fill(this->bottom_.get());
  SPPLayer<Dtype> layer(SPPParam(3, SPPParameter::AVE));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SPPLayerTest, BadConfigurationsNameTheLayer) {
  this->ExpectSetUpError(SPPParam(0, SPPParameter::MAX), "pyramid_height");
  // 4 bins on a side of 5: kernel 2, padding 2.
  this->bottom_->Reshape(2, 3, 5, 5);
  this->ExpectSetUpError(SPPParam(3, SPPParameter::MAX), "too small");
}

TYPED_TEST(SPPLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = SPPParam(2, SPPParameter::MAX);
  param.set_type("SPP");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(param)->type(), "SPP");
}

}  // namespace
}  // namespace crema
