// The training augmentations (crema/util/augmentation.hpp) and their use by
// DataTransformer: the warp's geometry, the jitter's formula and the
// erasure's rectangle checked by hand; each augmentation repeats for a seed,
// varies between seeds and is off at TEST; bad settings name their field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "crema/data_transformer.hpp"
#include "crema/util/augmentation.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"

namespace crema {
namespace {

using augment::Planes;

// One channel of height x width holding 0, 1, 2, ... row by row.
Planes Counting(int height, int width) {
  Planes planes;
  planes.Resize(1, height, width);
  for (size_t i = 0; i < planes.values.size(); ++i) planes.values[i] = static_cast<float>(i);
  return planes;
}

// A 1 x 8 x 8 record of varied bytes.
Datum VariedDatum(int channels = 1) {
  Datum datum;
  datum.set_channels(channels);
  datum.set_height(8);
  datum.set_width(8);
  std::string data;
  for (int i = 0; i < channels * 64; ++i) data.push_back(static_cast<char>((i * 37 + 11) % 251));
  datum.set_data(data);
  return datum;
}

TransformationParameter Transform(const std::string& text) {
  TransformationParameter param;
  ReadProtoFromString(text, "transform_param", &param);
  return param;
}

#ifdef CREMA_OPENCV
TEST(AugmentationTest, WarpOfTheWholeImageIsTheImage) {
  const Planes in = Counting(4, 5);
  Planes out;
  out.Resize(1, 4, 5);
  augment::Window whole;
  whole.width = 5;
  whole.height = 4;
  augment::WarpWindow(in, whole, 0, {0.f}, &out);
  for (size_t i = 0; i < in.values.size(); ++i) EXPECT_FLOAT_EQ(out.values[i], in.values[i]) << i;
}

TEST(AugmentationTest, WarpRotatesCounterClockwiseAsDisplayed) {
  // 0 1 2        2 5 8
  // 3 4 5  -->   1 4 7   (the right column comes to the top)
  // 6 7 8        0 3 6
  const Planes in = Counting(3, 3);
  Planes out;
  out.Resize(1, 3, 3);
  augment::Window whole;
  whole.width = whole.height = 3;
  augment::WarpWindow(in, whole, 90, {0.f}, &out);
  const std::vector<float> expected{2, 5, 8, 1, 4, 7, 0, 3, 6};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(out.values[i], expected[i], 1e-4) << i;
}

TEST(AugmentationTest, WarpScalesAWindowAndFillsOutsideWithTheMean) {
  // The window of columns 2..3, rows 0..1 of a 4x4 image, doubled: each
  // output pixel's centre falls between source pixels (bilinear); half a
  // pixel beyond the edge repeats the edge.
  const Planes in = Counting(4, 4);
  Planes out;
  out.Resize(1, 4, 4);
  augment::Window window;
  window.x = 2;
  window.width = 2;
  window.height = 2;
  augment::WarpWindow(in, window, 0, {50.f}, &out);
  // Output (v, u) samples source (y, x) = (v / 2 - 0.25, 2 + u / 2 - 0.25);
  // at v = 0 the row above is outside: row 0 again, as is column 4 column 3.
  const auto source = [](float y, float x) {
    const auto at = [](int yy, int xx) {
      return static_cast<float>(std::max(yy, 0) * 4 + std::min(xx, 3));
    };
    const int y0 = static_cast<int>(std::floor(y)), x0 = static_cast<int>(std::floor(x));
    const float fy = y - y0, fx = x - x0;
    return (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) +
           fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
  };
  for (int v = 0; v < 4; ++v) {
    for (int u = 0; u < 4; ++u) {
      EXPECT_NEAR(out.values[v * 4 + u], source(v / 2.f - 0.25f, 2 + u / 2.f - 0.25f), 0.05)
          << v << "," << u;
    }
  }
  // A 45-degree turn of a 7x7 image leaves its corners wholly outside: the
  // fill; the centre stays.
  const Planes seven = Counting(7, 7);
  out.Resize(1, 7, 7);
  augment::Window whole;
  whole.width = whole.height = 7;
  augment::WarpWindow(seven, whole, 45, {50.f}, &out);
  EXPECT_FLOAT_EQ(out.values[0], 50);
  EXPECT_FLOAT_EQ(out.values[48], 50);
  EXPECT_NEAR(out.values[24], 24, 1e-4);
}
#endif  // CREMA_OPENCV

TEST(AugmentationTest, ResizedCropWindowsStayInTheirRanges) {
  RandomResizedCropParameter param;
  param.set_scale_min(0.3f);
  param.set_scale_max(0.6f);
  param.set_ratio_min(0.5f);
  param.set_ratio_max(2.f);
  Context::set_random_seed(5);
  float widest = 1, tallest = 1;
  for (int i = 0; i < 500; ++i) {
    const augment::Window w = augment::DrawResizedCropWindow(param, 100, 80);
    ASSERT_GE(w.x, 0);
    ASSERT_GE(w.y, 0);
    ASSERT_LE(w.x + w.width, 80);
    ASSERT_LE(w.y + w.height, 100);
    const float fraction = w.width * w.height / 8000;
    EXPECT_GE(fraction, 0.3f - 0.02f);  // whole pixels: within rounding
    EXPECT_LE(fraction, 0.6f + 0.02f);
    const float ratio = w.width / w.height;
    EXPECT_GE(ratio, 0.5f * 0.95f);
    EXPECT_LE(ratio, 2.f * 1.05f);
    widest = std::max(widest, ratio);
    tallest = std::min(tallest, ratio);
  }
  EXPECT_GT(widest, 1.7f);  // the draws span the range
  EXPECT_LT(tallest, 0.6f);
}

TEST(AugmentationTest, JitterFollowsTheFormula) {
  Planes grey;
  grey.Resize(1, 1, 3);
  grey.values = {10, 100, 200};
  augment::JitterFactors brighter;
  brighter.brightness = 2;
  augment::JitterColour(brighter, true, &grey);
  EXPECT_EQ(grey.values, (std::vector<float>{20, 200, 255}));  // bytes clamp at 255
  grey.values = {0, 100, 200};
  augment::JitterFactors flatter;
  flatter.contrast = 0.5f;
  augment::JitterColour(flatter, true, &grey);  // about the mean grey, 100
  EXPECT_EQ(grey.values, (std::vector<float>{50, 100, 150}));

  Planes bgr;
  bgr.Resize(3, 1, 1);
  bgr.values = {10, 20, 30};  // grey = 0.114 * 10 + 0.587 * 20 + 0.299 * 30 = 21.85
  augment::JitterFactors washed;
  washed.saturation = 0;
  augment::JitterColour(washed, true, &bgr);
  for (float v : bgr.values) EXPECT_NEAR(v, 21.85f, 1e-4);
  bgr.values = {10, 20, 30};
  augment::JitterFactors vivid;
  vivid.saturation = 2;
  augment::JitterColour(vivid, false, &bgr);  // floats are not clamped
  EXPECT_NEAR(bgr.values[0], 21.85f + 2 * (10 - 21.85f), 1e-4);
  EXPECT_NEAR(bgr.values[2], 21.85f + 2 * (30 - 21.85f), 1e-4);
}

TEST(AugmentationTest, ErasuresStayInTheirRanges) {
  RandomErasingParameter param;
  param.set_prob(1);
  param.set_scale_min(0.1f);
  param.set_scale_max(0.2f);
  Context::set_random_seed(6);
  for (int i = 0; i < 300; ++i) {
    augment::Rect rect;
    ASSERT_TRUE(augment::DrawErasure(param, 40, 50, &rect));
    ASSERT_GE(rect.x, 0);
    ASSERT_LE(rect.x + rect.width, 50);
    ASSERT_LE(rect.y + rect.height, 40);
    const float fraction = rect.width * rect.height / 2000.f;
    EXPECT_GE(fraction, 0.1f - 0.03f);
    EXPECT_LE(fraction, 0.2f + 0.03f);
  }
  param.set_prob(0);
  augment::Rect rect;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(augment::DrawErasure(param, 40, 50, &rect));
}

// Each augmentation alone, as a user writes it.
std::vector<std::string> EachAugmentation() {
  std::vector<std::string> each{
      "color_jitter { brightness: 0.4 contrast: 0.4 }",
      "random_erasing { prob: 0.8 value: -7 }",
  };
#ifdef CREMA_OPENCV
  each.push_back("random_resized_crop { scale_min: 0.5 } crop_size: 6");
  each.push_back("rotation_degrees: 30");
#endif
  return each;
}

template <typename Dtype>
std::vector<Dtype> TwentyTransforms(DataTransformer<Dtype>* transformer, const Datum& datum,
                                    int seed) {
  const std::vector<int> shape = transformer->InferBlobShape(datum);
  const int size = shape[1] * shape[2] * shape[3];
  std::vector<Dtype> values(20 * size);
  Context::set_random_seed(seed);
  for (int i = 0; i < 20; ++i) transformer->Transform(datum, values.data() + i * size);
  return values;
}

TEST(AugmentationTest, EachRepeatsForASeedVariesBetweenSeedsAndIsOffAtTest) {
  const Datum datum = VariedDatum();
  DataTransformer<float> plain(Transform(""), TEST);
  const std::vector<float> unchanged = TwentyTransforms(&plain, datum, 1);
  for (const std::string& text : EachAugmentation()) {
    SCOPED_TRACE(text);
    DataTransformer<float> train(Transform(text), TRAIN);
    EXPECT_TRUE(train.draws_random_numbers());
    const std::vector<float> a = TwentyTransforms(&train, datum, 3);
    EXPECT_EQ(a, TwentyTransforms(&train, datum, 3));
    EXPECT_NE(a, TwentyTransforms(&train, datum, 4));
    if (a.size() == unchanged.size()) {
      EXPECT_NE(a, unchanged);
    }
    // At TEST the same parameters leave the image alone (but for a crop).
    DataTransformer<float> test(Transform(text), TEST);
    if (test.InferBlobShape(datum)[2] == 8) {
      EXPECT_EQ(TwentyTransforms(&test, datum, 3), unchanged);
    }
  }
}

TEST(AugmentationTest, ErasingWritesItsValueInARectangle) {
  DataTransformer<double> train(
      Transform("scale: 0.5 random_erasing { prob: 1 scale_min: 0.25 scale_max: 0.25 "
                "ratio_min: 1 ratio_max: 1 value: -7 }"),
      TRAIN);
  const Datum datum = VariedDatum();
  std::vector<double> out(64);
  Context::set_random_seed(2);
  train.Transform(datum, out.data());
  int erased = 0;
  for (int i = 0; i < 64; ++i) {
    if (out[i] == -7) {
      ++erased;
    } else {
      EXPECT_EQ(out[i], 0.5 * static_cast<uint8_t>(datum.data()[i])) << i;
    }
  }
  EXPECT_EQ(erased, 16);  // a quarter of 8x8, square
}

#ifdef CREMA_OPENCV
TEST(AugmentationTest, ResizedCropMayEnlarge) {
  // 9 and 12 from 8x8 records: no crop window is drawn (one pixel larger
  // than the image would leave no place for it).
  for (const int size : {9, 12}) {
    DataTransformer<float> train(
        Transform("random_resized_crop { } crop_size: " + std::to_string(size)), TRAIN);
    const std::vector<int> shape = train.InferBlobShape(VariedDatum());
    EXPECT_EQ(shape, (std::vector<int>{1, 1, size, size}));
    std::vector<float> out(size * size, -1);
    Context::set_random_seed(8);
    train.Transform(VariedDatum(), out.data());
    for (const float value : out) {  // bilinear samples of bytes
      EXPECT_GE(value, 0);
      EXPECT_LE(value, 250);
    }
  }
}
#endif

TEST(AugmentationTest, BadSettingsNameTheField) {
  const auto message = [](const std::string& text, const Datum* datum = nullptr) {
    return ErrorMessageOf([&] {
      DataTransformer<float> transformer(Transform(text), TRAIN);
      if (datum) transformer.InferBlobShape(*datum);
    });
  };
  EXPECT_NE(message("random_resized_crop { scale_min: 0.9 scale_max: 0.5 }").find("scale_min"),
            std::string::npos);
  EXPECT_NE(message("random_resized_crop { scale_min: 0 }").find("random_resized_crop"),
            std::string::npos);
  EXPECT_NE(message("random_resized_crop { ratio_min: -1 }").find("ratio_min"),
            std::string::npos);
  EXPECT_NE(message("rotation_degrees: -5").find("rotation_degrees"), std::string::npos);
  EXPECT_NE(message("color_jitter { contrast: 1.5 }").find("contrast"), std::string::npos);
  EXPECT_NE(message("random_erasing { prob: 2 }").find("prob"), std::string::npos);
  EXPECT_NE(message("random_erasing { scale_min: 0.5 scale_max: 0.1 }").find("random_erasing"),
            std::string::npos);
  const Datum grey = VariedDatum(1);
  EXPECT_NE(message("color_jitter { saturation: 0.3 }", &grey).find("saturation"),
            std::string::npos);
  const Datum colour = VariedDatum(3);
  EXPECT_EQ(message("color_jitter { saturation: 0.3 }", &colour), "");
#ifdef CREMA_OPENCV
  EXPECT_NE(message("rotation_degrees: 10 mean_file: 'mean.binaryproto'").find("mean_value"),
            std::string::npos);
#endif
}

}  // namespace
}  // namespace crema
