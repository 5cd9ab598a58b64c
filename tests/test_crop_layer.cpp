// Crop: values by hand and against direct indexing for every form of the
// offsets, the backward scatter into a zeroed diff, gradients against finite
// differences, and configuration errors, on every device.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/crop_layer.hpp"
#include "gradient_checker.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

template <typename TypeParam>
class CropLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  CropLayerTest()
      : input_(new Blob<Dtype>(2, 4, 5, 6)),
        reference_(new Blob<Dtype>(2, 4, 3, 3)),
        top_(new Blob<Dtype>()) {
    FillerParameter filler;
    filler.set_type("gaussian");
    GetFiller<Dtype>(filler)->Fill(input_.get());
    bottom_vec_ = {input_.get(), reference_.get()};
    top_vec_ = {top_.get()};
    param_.set_name("crop1");
  }

  void SetUpAndForward() {
    layer_.reset(new CropLayer<Dtype>(param_));
    layer_->SetUp(bottom_vec_, top_vec_);
    layer_->Forward(bottom_vec_, top_vec_);
  }

  // Every top element equals the input at its position plus the offsets.
  void ExpectCroppedFrom(const std::vector<int>& offsets) {
    ASSERT_EQ(top_->num_axes(), 4);
    for (int n = 0; n < top_->num(); ++n) {
      for (int c = 0; c < top_->channels(); ++c) {
        for (int h = 0; h < top_->height(); ++h) {
          for (int w = 0; w < top_->width(); ++w) {
            EXPECT_EQ(top_->data_at(n, c, h, w), input_->data_at(n + offsets[0], c + offsets[1],
                                                                 h + offsets[2], w + offsets[3]))
                << n << "," << c << "," << h << "," << w;
          }
        }
      }
    }
  }

  void ExpectSetUpError(const std::string& fragment) {
    CropLayer<Dtype> layer(param_);
    try {
      layer.SetUp(bottom_vec_, top_vec_);
      FAIL() << "expected an error mentioning '" << fragment << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("crop1"), std::string::npos) << message;
      EXPECT_NE(message.find("Crop"), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }

  std::unique_ptr<Blob<Dtype>> input_, reference_, top_;
  std::vector<Blob<Dtype>*> bottom_vec_, top_vec_;
  LayerParameter param_;
  std::unique_ptr<CropLayer<Dtype>> layer_;
};
TYPED_TEST_SUITE(CropLayerTest, TestDtypesAndDevices);

TYPED_TEST(CropLayerTest, ByHand) {
  this->input_->Reshape(std::vector<int>{1, 1, 3, 4});
  for (int i = 0; i < 12; ++i) this->input_->mutable_cpu_data()[i] = i;
  this->reference_->Reshape(std::vector<int>{1, 1, 2, 2});
  this->param_.mutable_crop_param()->add_offset(1);
  this->param_.mutable_crop_param()->add_offset(2);
  this->SetUpAndForward();
  ASSERT_EQ(this->top_->shape(), (std::vector<int>{1, 1, 2, 2}));
  const double expected[] = {6, 7, 10, 11};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(this->top_->cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(CropLayerTest, OneOffsetForEveryAxis) {
  this->param_.mutable_crop_param()->add_offset(2);
  this->SetUpAndForward();
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 4, 3, 3}));
  this->ExpectCroppedFrom({0, 0, 2, 2});
}

TYPED_TEST(CropLayerTest, NoOffsetStartsAtZero) {
  this->SetUpAndForward();
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 4, 3, 3}));
  this->ExpectCroppedFrom({0, 0, 0, 0});
}

TYPED_TEST(CropLayerTest, OffsetPerAxisFromAxisOne) {
  // Before the axis, bottom[0]'s sizes stay whatever bottom[1] says.
  this->reference_->Reshape(std::vector<int>{7, 2, 3, 4});
  CropParameter* crop = this->param_.mutable_crop_param();
  crop->set_axis(1);
  crop->add_offset(1);
  crop->add_offset(2);
  crop->add_offset(1);
  this->SetUpAndForward();
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 2, 3, 4}));
  this->ExpectCroppedFrom({0, 1, 2, 1});
}

TYPED_TEST(CropLayerTest, NegativeAxisCountsFromTheEnd) {
  this->reference_->Reshape(std::vector<int>{1, 1, 1, 4});
  this->param_.mutable_crop_param()->set_axis(-1);
  this->param_.mutable_crop_param()->add_offset(2);
  this->SetUpAndForward();
  EXPECT_EQ(this->top_->shape(), (std::vector<int>{2, 4, 5, 4}));
  this->ExpectCroppedFrom({0, 0, 0, 2});
}

TYPED_TEST(CropLayerTest, BackwardScattersIntoZeroedDiff) {
  using Dtype = typename TypeParam::Dtype;
  this->param_.mutable_crop_param()->add_offset(1);
  this->param_.mutable_crop_param()->add_offset(2);
  this->SetUpAndForward();
  for (int i = 0; i < this->top_->count(); ++i) this->top_->mutable_cpu_diff()[i] = i + 1;
  cpu_set(this->input_->count(), Dtype(7), this->input_->mutable_cpu_diff());
  this->layer_->Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 4; ++c) {
      for (int h = 0; h < 5; ++h) {
        for (int w = 0; w < 6; ++w) {
          const bool inside = h >= 1 && h < 4 && w >= 2 && w < 5;
          const Dtype expected = inside ? this->top_->diff_at(n, c, h - 1, w - 2) : Dtype(0);
          EXPECT_EQ(this->input_->diff_at(n, c, h, w), expected)
              << n << "," << c << "," << h << "," << w;
        }
      }
    }
  }
}

TYPED_TEST(CropLayerTest, Gradient) {
  using Dtype = typename TypeParam::Dtype;
  this->input_->Reshape(std::vector<int>{2, 3, 4, 5});
  FillerParameter filler;
  filler.set_type("gaussian");
  GetFiller<Dtype>(filler)->Fill(this->input_.get());
  this->reference_->Reshape(std::vector<int>{2, 3, 2, 3});
  this->param_.mutable_crop_param()->add_offset(1);
  CropLayer<Dtype> layer(this->param_);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(CropLayerTest, BadConfigurationsNameTheLayer) {
  CropParameter* crop = this->param_.mutable_crop_param();
  crop->add_offset(3);
  this->ExpectSetUpError("runs past");  // 3 + 3 > 5 rows
  crop->set_offset(0, 1);
  crop->add_offset(1);
  crop->add_offset(1);
  this->ExpectSetUpError("one per cropped axis");
  crop->clear_offset();
  crop->set_axis(4);
  this->ExpectSetUpError("out of range");
  crop->set_axis(2);
  this->reference_->Reshape(std::vector<int>{2, 4, 3});
  this->ExpectSetUpError("same number of axes");
}

TYPED_TEST(CropLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  this->param_.set_type("Crop");
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(this->param_)->type(), "Crop");
}

}  // namespace
}  // namespace crema
