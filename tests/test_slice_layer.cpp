// Slice: values along axes 0 and 1, even splits and slice points (and the
// legacy slice_dim), a single top passed through, gradients, and the slice
// points and shapes it refuses.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "crema/filler.hpp"
#include "crema/layers/slice_layer.hpp"
#include "gradient_checker.hpp"
#include "layer_test_util.hpp"
#include "test_common.hpp"

namespace crema {
namespace {

LayerParameter SliceParam(int axis, const std::vector<int>& slice_points) {
  LayerParameter param;
  param.set_name("cut");
  param.set_type("Slice");
  param.mutable_slice_param()->set_axis(axis);
  for (int point : slice_points) param.mutable_slice_param()->add_slice_point(point);
  return param;
}

template <typename TypeParam>
class SliceLayerTest : public MultiDeviceTest<TypeParam> {
  using Dtype = typename TypeParam::Dtype;

 protected:
  // Bottom 2 x 4 x 3 holding 0, 1, 2, ...
  SliceLayerTest() : bottom_(std::vector<int>{2, 4, 3}) {
    for (int i = 0; i < bottom_.count(); ++i) bottom_.mutable_cpu_data()[i] = i;
    bottom_vec_ = {&bottom_};
    for (auto& top : tops_) top.reset(new Blob<Dtype>());
  }
  std::vector<Blob<Dtype>*> Tops(int n) {
    std::vector<Blob<Dtype>*> tops;
    for (int i = 0; i < n; ++i) tops.push_back(tops_[i].get());
    return tops;
  }
  void Run(const LayerParameter& param, int num_tops) {
    SliceLayer<Dtype> layer(param);
    const std::vector<Blob<Dtype>*> top_vec = Tops(num_tops);
    layer.SetUp(bottom_vec_, top_vec);
    layer.Forward(bottom_vec_, top_vec);
  }
  void ExpectTop(int index, const std::vector<int>& shape, const std::vector<Dtype>& values) {
    ASSERT_EQ(tops_[index]->shape(), shape) << "top " << index;
    for (int i = 0; i < tops_[index]->count(); ++i) {
      EXPECT_EQ(tops_[index]->cpu_data()[i], values[i]) << "top " << index << ", element " << i;
    }
  }
  Blob<Dtype> bottom_;
  std::vector<Blob<Dtype>*> bottom_vec_;
  std::unique_ptr<Blob<Dtype>> tops_[3];
};
TYPED_TEST_SUITE(SliceLayerTest, TestDtypesAndDevices);

TYPED_TEST(SliceLayerTest, EvenlyAlongAxis0) {
  this->Run(SliceParam(0, {}), 2);
  this->ExpectTop(0, {1, 4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  this->ExpectTop(1, {1, 4, 3}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
}

TYPED_TEST(SliceLayerTest, AtSlicePointsAlongAxis1) {
  this->Run(SliceParam(1, {1, 3}), 3);
  this->ExpectTop(0, {2, 1, 3}, {0, 1, 2, 12, 13, 14});
  this->ExpectTop(1, {2, 2, 3}, {3, 4, 5, 6, 7, 8, 15, 16, 17, 18, 19, 20});
  this->ExpectTop(2, {2, 1, 3}, {9, 10, 11, 21, 22, 23});
}

TYPED_TEST(SliceLayerTest, EvenlyAlongTheLastAxisAndLegacySliceDim) {
  this->Run(SliceParam(-1, {}), 3);
  this->ExpectTop(0, {2, 4, 1}, {0, 3, 6, 9, 12, 15, 18, 21});
  this->ExpectTop(2, {2, 4, 1}, {2, 5, 8, 11, 14, 17, 20, 23});
  LayerParameter legacy;
  legacy.set_name("cut");
  legacy.mutable_slice_param()->set_slice_dim(1);
  this->Run(legacy, 2);
  this->ExpectTop(0, {2, 2, 3}, {0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17});
  this->ExpectTop(1, {2, 2, 3}, {6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23});
}

TYPED_TEST(SliceLayerTest, SingleTopIsPassedThrough) {
  this->Run(SliceParam(1, {}), 1);
  EXPECT_EQ(this->tops_[0]->shape(), this->bottom_.shape());
  EXPECT_EQ(this->tops_[0]->cpu_data(), this->bottom_.cpu_data());
}

TYPED_TEST(SliceLayerTest, GradientAxis0) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(3, 2, 2, 3);
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  SliceLayer<Dtype> layer(SliceParam(0, {1}));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->Tops(2));
}

TYPED_TEST(SliceLayerTest, GradientAxis1) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(2, 6, 2, 2);
  FillerParameter filler_param;
  filler_param.set_type("gaussian");
  GetFiller<Dtype>(filler_param)->Fill(&bottom);
  std::vector<Blob<Dtype>*> bottom_vec{&bottom};
  SliceLayer<Dtype> layer(SliceParam(1, {}));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradient(&layer, bottom_vec, this->Tops(3));
}

TYPED_TEST(SliceLayerTest, RefusesUnevenSplits) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> layer(SliceParam(1, {}));
  ExpectSetUpError(&layer, this->bottom_vec_, this->Tops(3),
                   "cannot split axis 1 of size 4 evenly into 3 tops");
}

TYPED_TEST(SliceLayerTest, RefusesBadSlicePoints) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> decreasing(SliceParam(1, {3, 2}));
  ExpectSetUpError(&decreasing, this->bottom_vec_, this->Tops(3), "strictly increasing");
  SliceLayer<Dtype> repeated(SliceParam(1, {2, 2}));
  ExpectSetUpError(&repeated, this->bottom_vec_, this->Tops(3), "strictly increasing");
  SliceLayer<Dtype> at_zero(SliceParam(1, {0}));
  ExpectSetUpError(&at_zero, this->bottom_vec_, this->Tops(2), "slice_point 0");
  SliceLayer<Dtype> at_end(SliceParam(1, {4}));
  ExpectSetUpError(&at_end, this->bottom_vec_, this->Tops(2), "slice_point 4");
  SliceLayer<Dtype> too_few(SliceParam(1, {1}));
  ExpectSetUpError(&too_few, this->bottom_vec_, this->Tops(3), "1 slice points for 3 tops");
}

TYPED_TEST(SliceLayerTest, RefusesBadAxes) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> out_of_range(SliceParam(3, {}));
  ExpectSetUpError(&out_of_range, this->bottom_vec_, this->Tops(2), "axis 3");
  LayerParameter both = SliceParam(1, {});
  both.mutable_slice_param()->set_slice_dim(1);
  SliceLayer<Dtype> ambiguous(both);
  ExpectSetUpError(&ambiguous, this->bottom_vec_, this->Tops(2), "not both");
}

TYPED_TEST(SliceLayerTest, RegisteredByTypeString) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_STREQ(LayerRegistry<Dtype>::CreateLayer(SliceParam(1, {}))->type(), "Slice");
}

}  // namespace
}  // namespace crema
