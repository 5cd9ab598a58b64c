// WindowData: the windows a batch draws (background first, then
// int(batch * fg_fraction) foreground), what each crop shows (warp, square,
// context padding, mirror), mean and scale, seeded repeatability, and the
// errors that name the window file's line or the image. Two synthetic images
// hold windows painted in colours that say which window a crop came from:
// blue = 30 * id, green 50 on the window's left half and 150 on its right,
// red 100, on a background of 5. The layer has no backward (data only), so
// there is no gradient test.
#ifdef CREMA_OPENCV

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <opencv2/core/core.hpp>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "crema/data/window_data_layer.hpp"
#include "crema/layer_factory.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

struct TestWindow {
  int id;
  int image;  // 0: a.png, 80 wide x 60 high; 1: b.png, 64 x 48
  int label;
  float overlap;
  int x1, y1, x2, y2;
};

// Every window is 20 wide. With fg_threshold = bg_threshold = 0.5: 1, 2 and 4
// are foreground, 3, 5 and 6 background (3's class is dropped).
const TestWindow kWindows[] = {
    {1, 0, 1, 0.9f, 10, 10, 29, 29}, {2, 0, 2, 0.7f, 40, 10, 59, 39},
    {3, 0, 1, 0.1f, 10, 35, 29, 54}, {4, 1, 3, 0.8f, 0, 0, 19, 19},
    {5, 1, 0, 0.2f, 30, 20, 49, 39}, {6, 1, 2, 0.4f, 40, 0, 59, 15},
};
const char* const kImageNames[] = {"a.png", "b.png"};
const int kImageWidth[] = {80, 64};
const int kImageHeight[] = {60, 48};
constexpr float kBackground = 5, kRed = 100, kLeftGreen = 50, kRightGreen = 150;

const TestWindow& WindowById(int id) { return kWindows[id - 1]; }

// A batch as served: data [batch, 3, crop, crop] and labels.
struct Served {
  std::vector<float> data;
  std::vector<float> label;
  bool operator==(const Served& other) const { return data == other.data && label == other.label; }
};

class WindowDataLayerTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    for (int image = 0; image < 2; ++image) {
      cv::Mat pixels(kImageHeight[image], kImageWidth[image], CV_8UC3,
                     cv::Scalar(kBackground, kBackground, kBackground));
      for (const TestWindow& w : kWindows) {
        if (w.image != image) continue;
        const int height = w.y2 - w.y1 + 1;
        pixels(cv::Rect(w.x1, w.y1, 10, height)).setTo(cv::Scalar(30 * w.id, kLeftGreen, kRed));
        pixels(cv::Rect(w.x1 + 10, w.y1, 10, height))
            .setTo(cv::Scalar(30 * w.id, kRightGreen, kRed));
      }
      ASSERT_TRUE(cv::imwrite(dir_ + "/" + kImageNames[image], pixels));
    }
  }

  // A window file of the windows `ids`, images named relative to root_folder.
  std::string WriteWindowFile(const std::vector<int>& ids) {
    std::ostringstream text;
    for (int image = 0; image < 2; ++image) {
      std::vector<const TestWindow*> windows;
      for (int id : ids) {
        if (WindowById(id).image == image) windows.push_back(&WindowById(id));
      }
      text << "# " << image << "\n"
           << kImageNames[image] << "\n3\n"
           << kImageHeight[image] << "\n"
           << kImageWidth[image] << "\n"
           << windows.size() << "\n";
      for (const TestWindow* w : windows) {
        text << w->label << " " << w->overlap << " " << w->x1 << " " << w->y1 << " " << w->x2 << " "
             << w->y2 << "\n";
      }
    }
    return WriteText("windows.txt", text.str());
  }

  std::string WriteText(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }

  LayerParameter Param(const std::string& source, int batch_size, int crop_size) {
    LayerParameter param;
    param.set_name("win");
    param.add_top("data");
    param.add_top("label");
    WindowDataParameter* window = param.mutable_window_data_param();
    window->set_source(source);
    window->set_root_folder(dir_ + "/");
    window->set_batch_size(batch_size);
    param.mutable_transform_param()->set_crop_size(crop_size);
    return param;
  }

  // Sets up a layer on a generator seeded with `seed` and serves `batches`.
  template <typename Dtype = float>
  std::vector<Served> Serve(const LayerParameter& param, int batches, uint64_t seed = 1701) {
    Context::set_random_seed(seed);
    WindowDataLayer<Dtype> layer(param);
    Blob<Dtype> data, label;
    std::vector<Blob<Dtype>*> bottom, top{&data, &label};
    layer.SetUp(bottom, top);
    std::vector<Served> served;
    for (int b = 0; b < batches; ++b) {
      layer.Forward(bottom, top);
      served.push_back({std::vector<float>(data.cpu_data(), data.cpu_data() + data.count()),
                        std::vector<float>(label.cpu_data(), label.cpu_data() + label.count())});
    }
    return served;
  }

  // The message of the error that SetUp (batches = 0) or the first Forward
  // throws; empty if none does.
  std::string ErrorOf(const LayerParameter& param, int batches = 0) {
    try {
      Serve(param, batches);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

#define EXPECT_MENTIONS(message, text) \
  EXPECT_NE((message).find(text), std::string::npos) << "'" << (message) << "' lacks " << (text)

// One item's pixel: channel c (0 blue, 1 green, 2 red), row h, column w.
float Pixel(const Served& batch, int item, int crop, int c, int h, int w) {
  return batch.data[((item * 3 + c) * crop + h) * crop + w];
}

// Expects column w of an item to hold `blue`, `green`, `red` in every row of
// `rows`.
void ExpectColumn(const Served& batch, int item, int crop, int w, const std::vector<int>& rows,
                  float blue, float green, float red) {
  for (int h : rows) {
    EXPECT_EQ(Pixel(batch, item, crop, 0, h, w), blue)
        << "item " << item << " h " << h << " w " << w;
    EXPECT_EQ(Pixel(batch, item, crop, 1, h, w), green)
        << "item " << item << " h " << h << " w " << w;
    EXPECT_EQ(Pixel(batch, item, crop, 2, h, w), red)
        << "item " << item << " h " << h << " w " << w;
  }
}

std::vector<int> Range(int begin, int end) {
  std::vector<int> values;
  for (int i = begin; i < end; ++i) values.push_back(i);
  return values;
}

template <typename Dtype>
class WindowDataLayerTypedTest : public WindowDataLayerTest {};
TYPED_TEST_SUITE(WindowDataLayerTypedTest, TestDtypes);

// Warp: the box is the whole crop. A 20-wide window warped to 8 puts its left
// half in columns 0-3 and its right half in 4-7, unblended.
TYPED_TEST(WindowDataLayerTypedTest, WarpedCropsShowTheirWindowsWithTheirLabels) {
  LayerParameter param = this->Param(this->WriteWindowFile({1, 2, 3, 4, 5, 6}), 8, 8);
  param.mutable_window_data_param()->set_fg_fraction(0.5);
  Context::set_random_seed(1701);
  WindowDataLayer<TypeParam> layer(param);
  Blob<TypeParam> data, label;
  std::vector<Blob<TypeParam>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  EXPECT_EQ(data.shape(), (std::vector<int>{8, 3, 8, 8}));
  EXPECT_EQ(label.shape(), (std::vector<int>{8}));
  EXPECT_EQ(layer.foreground_windows(), 3u);
  EXPECT_EQ(layer.background_windows(), 3u);
  for (int step = 0; step < 3; ++step) {
    layer.Forward(bottom, top);
    Served batch{std::vector<float>(data.cpu_data(), data.cpu_data() + data.count()),
                 std::vector<float>(label.cpu_data(), label.cpu_data() + label.count())};
    for (int item = 0; item < 8; ++item) {
      const int id = static_cast<int>(Pixel(batch, item, 8, 0, 0, 0)) / 30;
      ASSERT_TRUE(id >= 1 && id <= 6) << "item " << item << " shows no window";
      const TestWindow& window = WindowById(id);
      const bool foreground = window.overlap >= 0.5f;
      EXPECT_EQ(foreground, item >= 4) << "background first, then foreground";
      EXPECT_EQ(batch.label[item], foreground ? window.label : 0) << "window " << id;
      for (int w = 0; w < 8; ++w) {
        ExpectColumn(batch, item, 8, w, Range(0, 8), 30 * id, w < 4 ? kLeftGreen : kRightGreen,
                     kRed);
      }
    }
  }
}

TEST_F(WindowDataLayerTest, ForegroundFractionSetsTheSplitAndThresholdsTheSets) {
  LayerParameter param = Param(WriteWindowFile({1, 2, 3, 4, 5, 6}), 10, 8);
  param.mutable_window_data_param()->set_fg_fraction(0.25);  // int(2.5) = 2 foreground
  param.mutable_window_data_param()->set_bg_threshold(0.3);  // window 6 (0.4) is neither
  std::set<int> seen;
  for (const Served& batch : Serve(param, 20)) {
    for (int item = 0; item < 10; ++item) {
      const int id = static_cast<int>(batch.data[item * 3 * 64]) / 30;
      seen.insert(id);
      EXPECT_EQ(batch.label[item] > 0, item >= 8) << "item " << item;
      EXPECT_EQ(batch.label[item], item >= 8 ? WindowById(id).label : 0);
    }
  }
  EXPECT_EQ(seen, (std::set<int>{1, 2, 3, 4, 5})) << "every window drawn, window 6 never";
}

// Square: window 2 (x 40-59, y 10-39) becomes the 30 x 30 square around it,
// x 35-65 and y 10-40 once rounded (31 pixels), warped to 10: column j reads
// image x = 35 + 3.1 j + 1.05 and its right neighbour. Columns 0, 8 and 9 are
// background, 2-4 the left half, 5-7 the right half (1 blends).
TEST_F(WindowDataLayerTest, SquareModeTakesTheSquareAroundTheWindow) {
  LayerParameter param = Param(WriteWindowFile({2}), 2, 10);
  param.mutable_window_data_param()->set_fg_fraction(1);  // no background needed
  param.mutable_window_data_param()->set_crop_mode("square");
  const Served batch = Serve(param, 1)[0];
  for (int item = 0; item < 2; ++item) {
    EXPECT_EQ(batch.label[item], 2);
    for (int w : {0, 8, 9}) {
      ExpectColumn(batch, item, 10, w, Range(0, 10), kBackground, kBackground, kBackground);
    }
    for (int w : {2, 3, 4}) ExpectColumn(batch, item, 10, w, Range(0, 10), 60, kLeftGreen, kRed);
    for (int w : {5, 6, 7}) ExpectColumn(batch, item, 10, w, Range(0, 10), 60, kRightGreen, kRed);
  }
}

// context_pad 2 of crop 10 widens window 4 (x, y 0-19, in b.png's corner) by
// 10/6 to x, y -7..27: 7 of its 35 pixels lie outside the image and become 2
// rows and columns of zeros; x, y 0-27 warp to 8 pixels (3.5 each) at offset
// 2: 2-4 the left half, 5-7 the right half, 8-9 background.
class WindowDataContextTest : public WindowDataLayerTest {
 protected:
  LayerParameter ContextParam(int batch_size) {
    LayerParameter param = Param(WriteWindowFile({4}), batch_size, 10);
    param.mutable_window_data_param()->set_fg_fraction(1);
    param.mutable_window_data_param()->set_context_pad(2);
    return param;
  }
  // The crop of window 4 with (pixel - mean) * scale; `mirrored` flips it.
  void ExpectWindow4(const Served& batch, int item, bool mirrored, const float mean[3],
                     float scale) {
    const auto column = [mirrored](int w) { return mirrored ? 9 - w : w; };
    for (int w : {0, 1}) ExpectColumn(batch, item, 10, column(w), Range(0, 10), 0, 0, 0);
    for (int h : {0, 1}) {
      for (int w = 0; w < 10; ++w) ExpectColumn(batch, item, 10, w, {h}, 0, 0, 0);
    }
    const auto value = [&](float pixel, int c) { return (pixel - mean[c]) * scale; };
    for (int w : {2, 3, 4}) {
      ExpectColumn(batch, item, 10, column(w), Range(2, 8), value(120, 0), value(kLeftGreen, 1),
                   value(kRed, 2));
    }
    for (int w : {5, 6, 7}) {
      ExpectColumn(batch, item, 10, column(w), Range(2, 8), value(120, 0), value(kRightGreen, 1),
                   value(kRed, 2));
    }
    for (int w : {8, 9}) {
      ExpectColumn(batch, item, 10, column(w), Range(2, 10), value(kBackground, 0),
                   value(kBackground, 1), value(kBackground, 2));
    }
  }
};

const float kNoMean[3] = {0, 0, 0};

TEST_F(WindowDataContextTest, ContextPadShowsContextAndZerosOutsideTheImage) {
  const Served batch = Serve(ContextParam(2), 1)[0];
  for (int item = 0; item < 2; ++item) {
    EXPECT_EQ(batch.label[item], 3);
    ExpectWindow4(batch, item, false, kNoMean, 1);
  }
}

// Mirrored, the padding moves to the right with the window: the crop is the
// unmirrored one flipped.
TEST_F(WindowDataContextTest, MirrorFlipsSomeCropsWithTheirPadding) {
  LayerParameter param = ContextParam(16);
  param.mutable_transform_param()->set_mirror(true);
  const Served batch = Serve(param, 1)[0];
  int flipped = 0;
  for (int item = 0; item < 16; ++item) {
    const bool mirrored = Pixel(batch, item, 10, 0, 5, 0) != 0;  // column 0 is padding unflipped
    flipped += mirrored;
    ExpectWindow4(batch, item, mirrored, kNoMean, 1);
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, 16);
}

// The padding stays 0 (Caffe subtracts no mean there); scale may stand in
// transform_param or, as Caffe reads it, in window_data_param.
TEST_F(WindowDataContextTest, MeanValuesAndScaleApplyToTheWindowOnly) {
  const float mean[3] = {10, 20, 30};
  for (bool in_window_param : {false, true}) {
    LayerParameter param = ContextParam(2);
    for (float value : mean) param.mutable_transform_param()->add_mean_value(value);
    if (in_window_param) {
      param.mutable_window_data_param()->set_scale(0.5);
    } else {
      param.mutable_transform_param()->set_scale(0.5);
    }
    const Served batch = Serve(param, 1)[0];
    for (int item = 0; item < 2; ++item) ExpectWindow4(batch, item, false, mean, 0.5);
  }
}

TEST_F(WindowDataContextTest, OneMeanValueServesEveryChannel) {
  LayerParameter param = ContextParam(1);
  param.mutable_transform_param()->add_mean_value(4);
  const float mean[3] = {4, 4, 4};
  ExpectWindow4(Serve(param, 1)[0], 0, false, mean, 1);
}

// A 12 x 12 mean file: the crop subtracts its centred 8 x 8 part, place by place.
TEST_F(WindowDataLayerTest, MeanFileIsSubtractedAtTheSamePlace) {
  Blob<float> mean(1, 3, 12, 12);
  for (int c = 0; c < 3; ++c) {
    for (int h = 0; h < 12; ++h) {
      for (int w = 0; w < 12; ++w) mean.mutable_cpu_data()[(c * 12 + h) * 12 + w] = c + h + w;
    }
  }
  BlobProto proto;
  mean.ToProto(&proto);
  WriteProtoToBinaryFile(proto, dir_ + "/mean.binaryproto");
  LayerParameter param = Param(WriteWindowFile({1}), 1, 8);
  param.mutable_window_data_param()->set_fg_fraction(1);
  param.mutable_transform_param()->set_mean_file(dir_ + "/mean.binaryproto");
  const Served batch = Serve(param, 1)[0];
  for (int h = 0; h < 8; ++h) {
    for (int w = 0; w < 8; ++w) {
      const float pixel[3] = {30, w < 4 ? kLeftGreen : kRightGreen, kRed};
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(Pixel(batch, 0, 8, c, h, w), pixel[c] - (c + (h + 2) + (w + 2)));
      }
    }
  }
}

TEST_F(WindowDataLayerTest, SeededRunsServeTheSameBatches) {
  LayerParameter param = Param(WriteWindowFile({1, 2, 3, 4, 5, 6}), 8, 8);
  param.mutable_transform_param()->set_mirror(true);
  param.mutable_window_data_param()->set_context_pad(1);
  const std::vector<Served> first = Serve(param, 4, 42);
  EXPECT_EQ(Serve(param, 4, 42), first);
  EXPECT_NE(Serve(param, 4, 43), first) << "another seed must draw other batches";
  // The prefetch depth changes when batches are loaded, not what they hold.
  param.mutable_data_param()->set_prefetch(1);
  EXPECT_EQ(Serve(param, 4, 42), first);
  param.mutable_data_param()->set_prefetch(5);
  EXPECT_EQ(Serve(param, 4, 42), first);
  // Cached images serve the same pixels.
  param.mutable_window_data_param()->set_cache_images(true);
  EXPECT_EQ(Serve(param, 4, 42), first);
}

TEST_F(WindowDataLayerTest, LayerIsRegistered) {
  LayerParameter param = Param(WriteWindowFile({1, 3}), 2, 8);
  param.set_type("WindowData");
  EXPECT_STREQ(LayerRegistry<float>::CreateLayer(param)->type(), "WindowData");
}

// ---- Errors: each names the layer and the window file's line or the image.

TEST_F(WindowDataLayerTest, MissingWindowFileIsNamed) {
  const std::string message = ErrorOf(Param(dir_ + "/none.txt", 4, 8));
  EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
  EXPECT_MENTIONS(message, dir_ + "/none.txt");
}

TEST_F(WindowDataLayerTest, MalformedBlocksNameTheirLine) {
  const std::string good_block = "# 0\na.png\n3\n60\n80\n2\n1 0.9 10 10 29 29\n0 0.1 10 35 29 54\n";
  struct Case {
    std::string text;
    std::string expected;  // besides the layer and the file
  };
  const Case cases[] = {
      {"% 0\na.png\n3\n60\n80\n0\n", "line 1: expected '#' starting an image block, found '%'"},
      {"# 1\na.png\n3\n60\n80\n0\n", "line 1: image index 1, expected 0"},
      {"# 0\na.png\n3\n60\neighty\n0\n", "line 5: expected the image's width, found 'eighty'"},
      {"# 0\na.png\n3\n60\n80\n2\n1 0.9 10 10 29 29\n",
       "line 7: expected a window's class, "
       "found the end of the file"},
      {good_block + "# 1\nb.png\n3\n48\n64\n1\n3 high 0 0 19 19\n",
       "line 15: expected the window's overlap, found 'high'"},
      {"# 0\na.png\n4\n60\n80\n0\n", "line 3: " + dir_ + "/a.png has 4 channels"},
      {good_block + "# 1\nb.png\n1\n48\n64\n0\n", "line 11: " + dir_ +
                                                      "/b.png has 1 channels, "
                                                      "the first image 3"},
      {"# 0\na.png\n3\n60\n80\n1\n0 0.9 10 10 29 29\n", "line 7: a foreground window"},
      {"\n\n  \n", "is empty"},
  };
  for (const Case& c : cases) {
    const std::string source = WriteText("bad.txt", c.text);
    const std::string message = ErrorOf(Param(source, 4, 8));
    EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
    EXPECT_MENTIONS(message, source);
    EXPECT_MENTIONS(message, c.expected);
  }
}

TEST_F(WindowDataLayerTest, WindowOutsideItsImageIsRefused) {
  for (const char* corners : {"10 10 80 29", "-1 10 29 29", "10 10 29 60", "29 10 10 29"}) {
    const std::string source =
        WriteText("bad.txt", std::string("# 0\na.png\n3\n60\n80\n2\n0 0.1 10 35 29 54\n1 0.9 ") +
                                 corners + "\n");
    const std::string message = ErrorOf(Param(source, 4, 8));
    EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
    EXPECT_MENTIONS(message, source + " line 8: the window x1 y1 x2 y2 = " + corners +
                                 " is not inside the image " + dir_ + "/a.png");
  }
}

// In square mode a tall, one-pixel-wide window of a two-pixel-wide image is
// widened to a square mostly outside the image: its part inside warps to 0
// pixels wide, and OpenCV's resize aborted when it was drawn.
TEST_F(WindowDataLayerTest, WindowThatWarpsToNothingIsRefusedAtSetUp) {
  ASSERT_TRUE(cv::imwrite(dir_ + "/thin.png", cv::Mat(100, 2, CV_8UC3, cv::Scalar(1, 2, 3))));
  const std::string source = WriteText("thin.txt", "# 0\nthin.png\n3\n100\n2\n1\n1 0.9 0 0 0 99\n");
  LayerParameter param = Param(source, 1, 10);
  param.mutable_window_data_param()->set_fg_fraction(1);
  param.mutable_window_data_param()->set_crop_mode("square");
  const std::string message = ErrorOf(param);
  EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
  EXPECT_MENTIONS(message, source + " line 7: the window x1 y1 x2 y2 = 0 0 0 99");
  EXPECT_MENTIONS(message, "warps to 0x10 pixels");
  param.mutable_window_data_param()->set_crop_mode("warp");  // warped whole: fine
  EXPECT_EQ(ErrorOf(param, 1), "");
}

// A mean file that reads but holds a malformed blob names the file.
TEST_F(WindowDataLayerTest, MalformedMeanFileIsNamed) {
  BlobProto proto;
  for (int dim : {1, 3, 12, 12}) proto.mutable_shape()->add_dim(dim);
  proto.add_data(0);  // 1 value for 432
  WriteProtoToBinaryFile(proto, dir_ + "/short_mean.binaryproto");
  LayerParameter param = Param(WriteWindowFile({1}), 1, 8);
  param.mutable_window_data_param()->set_fg_fraction(1);
  param.mutable_transform_param()->set_mean_file(dir_ + "/short_mean.binaryproto");
  const std::string message = ErrorOf(param);
  EXPECT_MENTIONS(message,
                  "layer 'win' (WindowData): the mean file " + dir_ + "/short_mean.binaryproto: ");
}

TEST_F(WindowDataLayerTest, MissingOrUnreadableImagesAreNamed) {
  const std::string block_a = "# 0\na.png\n3\n60\n80\n2\n1 0.9 10 10 29 29\n0 0.1 10 35 29 54\n";
  // Missing: found at set-up, with the line of its block.
  std::string source = WriteText("bad.txt", block_a + "# 1\nc.png\n3\n48\n64\n0\n");
  for (bool cache : {false, true}) {
    LayerParameter param = Param(source, 4, 8);
    param.mutable_window_data_param()->set_cache_images(cache);
    const std::string message = ErrorOf(param);
    EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
    EXPECT_MENTIONS(message, source + " line 9: " + dir_ + "/c.png: no such image file");
  }
  // Not an image, or not the size its block says: found when a window of it
  // is drawn (every window here is in it).
  WriteText("junk.png", "not a png");
  const std::string cases[][2] = {
      {"# 0\njunk.png\n3\n60\n80\n2\n1 0.9 10 10 29 29\n0 0.1 10 35 29 54\n", dir_ + "/junk.png"},
      {"# 0\na.png\n3\n58\n70\n2\n1 0.9 10 10 29 29\n0 0.1 10 35 29 54\n",
       dir_ + "/a.png is 80 wide and 60 high; its block says 70 and 58"},
  };
  for (const auto& c : cases) {
    source = WriteText("bad.txt", c[0]);
    for (bool cache : {false, true}) {
      LayerParameter param = Param(source, 4, 8);
      param.mutable_window_data_param()->set_cache_images(cache);
      EXPECT_EQ(ErrorOf(param, 0), "") << "found when drawn, not at set-up";
      const std::string message = ErrorOf(param, 1);
      EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
      EXPECT_MENTIONS(message, source + " line 1: " + c[1]);
    }
  }
}

// Caffe wants both kinds always; here only the kinds the split draws.
TEST_F(WindowDataLayerTest, ZeroWindowsOfAKindTheSplitNeedsAreRefused) {
  const std::string only_background = WriteWindowFile({3, 5});
  std::string message = ErrorOf(Param(only_background, 8, 8));
  EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
  EXPECT_MENTIONS(message, "the window file " + only_background + " has no foreground windows");
  EXPECT_MENTIONS(message, "asks for 2 in each batch of 8");
  LayerParameter no_foreground = Param(only_background, 8, 8);
  no_foreground.mutable_window_data_param()->set_fg_fraction(0.1f);  // int(0.8) = 0
  for (const Served& batch : Serve(no_foreground, 2)) {
    EXPECT_EQ(batch.label, std::vector<float>(8, 0));
  }

  const std::string only_foreground = WriteWindowFile({1, 4});
  message = ErrorOf(Param(only_foreground, 8, 8));
  EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
  EXPECT_MENTIONS(message, "the window file " + only_foreground + " has no background windows");
  EXPECT_MENTIONS(message, "asks for 6 in each batch of 8");
}

TEST_F(WindowDataLayerTest, BadSettingsAreRefused) {
  const std::string source = WriteWindowFile({1, 2, 3, 4, 5, 6});
  struct Case {
    std::function<void(LayerParameter*)> change;
    std::string expected;
  };
  const Case cases[] = {
      {[](LayerParameter* p) { p->mutable_window_data_param()->set_batch_size(0); },
       "batch_size must be positive, got 0"},
      {[](LayerParameter* p) { p->mutable_transform_param()->clear_crop_size(); },
       "crop_size must be positive"},
      {[](LayerParameter* p) { p->mutable_transform_param()->set_crop_size(0); },
       "crop_size must be positive"},
      {[](LayerParameter* p) { p->mutable_window_data_param()->set_context_pad(4); },
       "context_pad 4 on both sides leaves nothing of crop_size 8"},
      {[](LayerParameter* p) { p->mutable_window_data_param()->set_crop_mode("circle"); },
       "crop_mode 'circle' is neither 'warp' nor 'square'"},
      {[](LayerParameter* p) { p->mutable_window_data_param()->set_fg_fraction(1.5); },
       "fg_fraction 1.5 is not between 0 and 1"},
      {[](LayerParameter* p) {
         p->mutable_transform_param()->set_scale(2);
         p->mutable_window_data_param()->set_scale(3);
       },
       "transform_param.scale (2) and window_data_param.scale (3) differ"},
      {[](LayerParameter* p) {
         p->mutable_transform_param()->add_mean_value(1);
         p->mutable_transform_param()->add_mean_value(2);
       },
       "mean_value has 2 values for 3 channels"},
      {[](LayerParameter* p) { p->mutable_transform_param()->set_force_gray(true); },
       "transform_param asks for grey images"},
      {[](LayerParameter* p) { p->mutable_window_data_param()->clear_source(); },
       "window_data_param.source (the window file) is not given"},
  };
  for (const Case& c : cases) {
    LayerParameter param = Param(source, 8, 8);
    c.change(&param);
    const std::string message = ErrorOf(param);
    EXPECT_MENTIONS(message, "layer 'win' (WindowData)");
    EXPECT_MENTIONS(message, c.expected);
  }
}

// A V1-style net may give crop_size in window_data_param: it is honoured.
TEST_F(WindowDataLayerTest, CropSizeMayStandInWindowDataParam) {
  LayerParameter param = Param(WriteWindowFile({1, 3}), 2, 8);
  param.mutable_transform_param()->clear_crop_size();
  param.mutable_window_data_param()->set_crop_size(6);
  EXPECT_EQ(Serve(param, 1)[0].data.size(), 2u * 3 * 6 * 6);
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
