// ImageSegData (DeepLab v2, PSPNet): images with label images (PIXEL), one
// class per image (IMAGE) or none (NONE); DeepLab's pad to the crop (mean for
// the image, ignore_label for the labels), its crop (random in TRAIN, the
// centre in TEST), mirror and scale_factors applied to image and labels
// alike; the data_dim top; the settings the fork refuses refused, and bad
// lists named; a DeepLab-v2-style training net as its files write it. (A
// data layer has no backward: no gradient check.)
#include <gtest/gtest.h>

#ifdef CREMA_OPENCV

#include <cmath>
#include <fstream>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <set>
#include <string>
#include <vector>

#include "crema/data/image_seg_data_layer.hpp"
#include "crema/net.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class ImageSegDataLayerTest : public ScratchDirTest {
 protected:
  // Image i is 6x8 colour; its labels are 6x8 grey with a value unique to
  // (i, h, w), which is also the image's channel 0 there (channel 1 is 7 i,
  // channel 2 is 200), so a served item shows where each pixel came from.
  static int SegLabelOf(int i, int h, int w) { return i * 48 + h * 8 + w; }

  void SetUp() override {
    ScratchDirTest::SetUp();
    std::ofstream pixel(dir_ + "/pixel.txt"), image(dir_ + "/image.txt"), none(dir_ + "/none.txt");
    for (int i = 0; i < kImages; ++i) {
      cv::Mat picture(6, 8, CV_8UC3), labels(6, 8, CV_8UC1);
      for (int h = 0; h < 6; ++h) {
        for (int w = 0; w < 8; ++w) {
          labels.at<uint8_t>(h, w) = SegLabelOf(i, h, w);
          picture.at<cv::Vec3b>(h, w) = cv::Vec3b(SegLabelOf(i, h, w), 7 * i, 200);
        }
      }
      ASSERT_TRUE(cv::imwrite(dir_ + "/img" + std::to_string(i) + ".png", picture));
      ASSERT_TRUE(cv::imwrite(dir_ + "/lab" + std::to_string(i) + ".png", labels));
      pixel << "img" << i << ".png lab" << i << ".png\n";
      image << "img" << i << ".png " << 10 + i << "\n";
      none << "img" << i << ".png\n";
    }
  }

  // The layer as DeepLab v2's train.prototxt writes it.
  LayerParameter Param(const std::string& image_data, const std::string& transform = "",
                       const std::string& list = "pixel", Phase phase = TRAIN) const {
    LayerParameter param;
    ReadProtoFromString(
        "name: 'data' type: 'ImageSegData' top: 'data' top: 'label' "
        "top: 'data_dim' phase: " +
            std::string(phase == TRAIN ? "TRAIN" : "TEST") + " image_data_param { source: '" +
            dir_ + "/" + list + ".txt' root_folder: '" + dir_ + "/' " +
            (image_data.find("batch_size") == std::string::npos ? "batch_size: 2 " : "") +
            (image_data.find("label_type") != std::string::npos ? ""
             : list == "pixel"                                  ? "label_type: PIXEL "
             : list == "image"                                  ? "label_type: IMAGE "
                                                                : "label_type: NONE ") +
            image_data + " } transform_param { " + transform + " }",
        "layer", &param);
    return param;
  }

  struct Served {
    std::vector<float> data, labels, dims;
    std::vector<int> data_shape;
  };
  static Served Serve(const LayerParameter& param, int batches) {
    ImageSegDataLayer<float> layer(param);
    Blob<float> data, label, dim;
    std::vector<Blob<float>*> bottom, top{&data, &label, &dim};
    layer.SetUp(bottom, top);
    Served served;
    for (int b = 0; b < batches; ++b) {
      layer.Forward(bottom, top);
      served.data.insert(served.data.end(), data.cpu_data(), data.cpu_data() + data.count());
      served.labels.insert(served.labels.end(), label.cpu_data(), label.cpu_data() + label.count());
      served.dims.insert(served.dims.end(), dim.cpu_data(), dim.cpu_data() + dim.count());
    }
    EXPECT_EQ(label.shape(), (std::vector<int>{data.shape(0), 1, data.shape(2), data.shape(3)}));
    EXPECT_EQ(dim.shape(), (std::vector<int>{data.shape(0), 1, 1, 2}));
    served.data_shape = data.shape();
    return served;
  }
  std::string SetUpError(const LayerParameter& param) const {
    return ErrorMessageOf([&] {
      ImageSegDataLayer<float> layer(param);
      Blob<float> data, label;
      std::vector<Blob<float>*> bottom, top{&data, &label};
      layer.SetUp(bottom, top);
      layer.Forward(bottom, top);
    });
  }

  static constexpr int kImages = 3;
};

TEST_F(ImageSegDataLayerTest, ServesPixelLabelsWithMeanAndScaleInOrderAndWraps) {
  const Served served =
      Serve(Param("", "mean_value: 10 mean_value: 20 mean_value: 30 scale: 0.5"), 2);
  EXPECT_EQ(served.data_shape, (std::vector<int>{2, 3, 6, 8}));
  const int images[] = {0, 1, 2, 0};
  for (int item = 0; item < 4; ++item) {
    const int i = images[item];
    EXPECT_EQ(served.dims[2 * item], 6);
    EXPECT_EQ(served.dims[2 * item + 1], 8);
    for (int h = 0; h < 6; ++h) {
      for (int w = 0; w < 8; ++w) {
        const int at = h * 8 + w;
        EXPECT_EQ(served.labels[item * 48 + at], SegLabelOf(i, h, w));
        EXPECT_FLOAT_EQ(served.data[item * 144 + at], (SegLabelOf(i, h, w) - 10) * 0.5f);
        EXPECT_FLOAT_EQ(served.data[item * 144 + 48 + at], (7 * i - 20) * 0.5f);
        EXPECT_FLOAT_EQ(served.data[item * 144 + 96 + at], (200 - 30) * 0.5f);
      }
    }
  }
}

// A crop larger than the image pads at the bottom and right, as DeepLab does:
// the image with the mean (0 once subtracted), the labels with ignore_label.
TEST_F(ImageSegDataLayerTest, PadsToTheCropWithTheMeanAndIgnoreLabel) {
  for (const Phase phase : {TRAIN, TEST}) {
    const Served served = Serve(Param("ignore_label: 250",
                                      "crop_height: 9 crop_width: 11 "
                                      "mean_value: 100",
                                      "pixel", phase),
                                1);
    EXPECT_EQ(served.data_shape, (std::vector<int>{2, 3, 9, 11}));
    for (int item = 0; item < 2; ++item) {
      for (int h = 0; h < 9; ++h) {
        for (int w = 0; w < 11; ++w) {
          const bool inside = h < 6 && w < 8;
          const int at = h * 11 + w;
          EXPECT_EQ(served.labels[item * 99 + at], inside ? SegLabelOf(item, h, w) : 250);
          EXPECT_FLOAT_EQ(served.data[item * 297 + 198 + at], inside ? 100.0f : 0.0f);
        }
      }
    }
  }
}

// TRAIN crops at a random place, mirrors at random, and moves image and
// labels together; TEST crops the centre.
TEST_F(ImageSegDataLayerTest, CropsAndMirrorsImageAndLabelsTogether) {
  const Served served = Serve(Param("", "crop_size: 4 mirror: true"), 30);
  std::set<std::pair<int, int>> corners;
  std::set<bool> mirrored;
  for (int item = 0; item < 60; ++item) {
    const float* labels = &served.labels[item * 16];
    const float* channel0 = &served.data[item * 48];
    for (int k = 0; k < 16; ++k) ASSERT_EQ(labels[k], channel0[k]) << "item " << item;
    const int i = item % kImages;
    const bool flip = labels[0] > labels[3];
    const int first = static_cast<int>(labels[flip ? 3 : 0]) - i * 48;
    const int h0 = first / 8, w0 = first % 8;
    ASSERT_TRUE(h0 <= 2 && w0 <= 4) << "item " << item << ": a window inside the image";
    for (int h = 0; h < 4; ++h) {
      for (int w = 0; w < 4; ++w) {
        const int source_w = flip ? w0 + 3 - w : w0 + w;
        ASSERT_EQ(labels[h * 4 + w], SegLabelOf(i, h0 + h, source_w)) << "item " << item;
      }
    }
    corners.insert({h0, w0});
    mirrored.insert(flip);
  }
  EXPECT_GT(corners.size(), 5u);
  EXPECT_EQ(mirrored.size(), 2u);
  const Served centre = Serve(Param("", "crop_height: 4 crop_width: 6", "pixel", TEST), 1);
  for (int h = 0; h < 4; ++h) {
    for (int w = 0; w < 6; ++w) EXPECT_EQ(centre.labels[h * 6 + w], SegLabelOf(0, h + 1, w + 1));
  }
}

// A scale factor resizes image (bilinear) and labels (nearest) alike, each
// side int(side * factor); the crop then pads what the scale took away.
TEST_F(ImageSegDataLayerTest, ScaleFactorsResizeImageAndLabelsAlike) {
  const Served served =
      Serve(Param("", "crop_height: 6 crop_width: 8 scale_factors: 0.5", "pixel", TEST), 1);
  for (int item = 0; item < 2; ++item) {
    EXPECT_EQ(served.dims[2 * item], 6) << "data_dim is the size as read";
    for (int h = 0; h < 6; ++h) {
      for (int w = 0; w < 8; ++w) {
        const bool inside = h < 3 && w < 4;
        EXPECT_EQ(served.labels[item * 48 + h * 8 + w],
                  inside ? SegLabelOf(item, 2 * h, 2 * w) : 255)
            << h << "," << w;
      }
    }
    EXPECT_FLOAT_EQ(served.data[item * 144 + 96], 200.0f);  // a flat channel stays flat
  }
}

TEST_F(ImageSegDataLayerTest, ImageAndNoneLabelTypesFillTheLabelMap) {
  const Served image = Serve(Param("", "", "image"), 1);
  for (int item = 0; item < 2; ++item) {
    for (int k = 0; k < 48; ++k) EXPECT_EQ(image.labels[item * 48 + k], 10 + item);
  }
  const Served none = Serve(Param("ignore_label: 9", "", "none"), 1);
  for (float label : none.labels) EXPECT_EQ(label, 9);
}

TEST_F(ImageSegDataLayerTest, ShuffleServesEachImageOncePerPass) {
  const Served served = Serve(Param("shuffle: true batch_size: 3"), 4);
  for (int pass = 0; pass < 4; ++pass) {
    std::set<int> images;
    for (int item = 0; item < 3; ++item) {
      images.insert(static_cast<int>(served.labels[(pass * 3 + item) * 48]) / 48);
    }
    EXPECT_EQ(images.size(), 3u) << "pass " << pass;
  }
}

TEST_F(ImageSegDataLayerTest, RefusesWhatTheForkRefusesNamingTheLayer) {
  const std::vector<std::pair<LayerParameter, std::string>> cases = {
      {Param("", "mean_file: 'x.binaryproto'"), "mean_file"},
      {Param("", "crop_size: 4 crop_height: 4 crop_width: 4"), "crop_size, or crop_height"},
      {Param("", "crop_height: 4"), "crop_height and crop_width together"},
      {Param("ignore_label: 256"), "ignore_label 256"},
      {Param("", "scale_factors: 0"), "scale_factors: 0"},
      {Param("", "mean_value: 1 mean_value: 2"), "one mean_value or one per channel (3)"},
      {Param("", "color_jitter { brightness: 0.2 }"), "random augmentations"},
      {Param("label_type: BBX"), "BBX"},
  };
  for (const auto& [param, expected] : cases) {
    const std::string message = SetUpError(param);
    EXPECT_NE(message.find("layer 'data' (ImageSegData)"), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << expected << " not in: " << message;
  }
}

TEST_F(ImageSegDataLayerTest, BadListsAndPairsAreNamed) {
  {
    std::ofstream(dir_ + "/image.txt") << "img0.png 3\nimg1.png 256\n";
    const std::string message = SetUpError(Param("", "", "image"));
    EXPECT_NE(message.find("image.txt:2: the class 256"), std::string::npos) << message;
  }
  {
    ASSERT_TRUE(cv::imwrite(dir_ + "/small.png", cv::Mat(5, 8, CV_8UC1, cv::Scalar(1))));
    std::ofstream(dir_ + "/pixel.txt") << "img0.png small.png\n";
    const std::string message = SetUpError(Param(""));
    EXPECT_NE(message.find("pixel.txt:1: the image is 8x6, its labels 8x5"), std::string::npos)
        << message;
  }
  {
    ASSERT_TRUE(cv::imwrite(dir_ + "/big.png", cv::Mat(7, 8, CV_8UC3, cv::Scalar(1))));
    ASSERT_TRUE(cv::imwrite(dir_ + "/big_lab.png", cv::Mat(7, 8, CV_8UC1, cv::Scalar(1))));
    std::ofstream(dir_ + "/pixel.txt") << "img0.png lab0.png\nbig.png big_lab.png\n";
    const std::string message = SetUpError(Param(""));
    EXPECT_NE(message.find("pixel.txt:2:"), std::string::npos) << message;
    EXPECT_NE(message.find("give a crop"), std::string::npos) << message;
  }
}

// scale_factors, crop_height and crop_width belong to ImageSegData: another
// data layer would ignore them, so it refuses them.
TEST_F(ImageSegDataLayerTest, OtherDataLayersRefuseItsTransformFields) {
  LayerParameter param;
  ReadProtoFromString(
      "name: 'd' type: 'ImageData' top: 'data' top: 'label' image_data_param { "
      "source: '" +
          dir_ + "/image.txt' root_folder: '" + dir_ +
          "/' batch_size: 1 } transform_param { crop_height: 4 crop_width: 4 }",
      "layer", &param);
  NetParameter net;
  *net.add_layer() = param;
  net.mutable_state()->set_phase(TRAIN);
  const std::string message = ErrorMessageOf([&] { Net<float> built(net); });
  EXPECT_NE(message.find("applied only by ImageSegData"), std::string::npos) << message;
}

// A DeepLab v2 training net as its train.prototxt writes it (ImageSegData
// with three tops, a dilated convolution, the label shrunk by Interp, the
// loss ignoring 255, data_dim silenced) trains: the loss falls.
TEST_F(ImageSegDataLayerTest, DeepLabStyleTrainingNetLearns) {
  std::ofstream list(dir_ + "/seg.txt");
  for (int i = 0; i < 4; ++i) {
    cv::Mat picture(9, 9, CV_8UC3), labels(9, 9, CV_8UC1);
    for (int h = 0; h < 9; ++h) {
      for (int w = 0; w < 9; ++w) {
        const int label = (h + i) % 3 == 0 ? 255 : w < 4 ? 0 : 1;
        labels.at<uint8_t>(h, w) = label;
        picture.at<cv::Vec3b>(h, w) = label == 1 ? cv::Vec3b(200, 60, 90) : cv::Vec3b(30, 90, 160);
      }
    }
    ASSERT_TRUE(cv::imwrite(dir_ + "/s" + std::to_string(i) + ".png", picture));
    ASSERT_TRUE(cv::imwrite(dir_ + "/s" + std::to_string(i) + "_gt.png", labels));
    list << "s" << i << ".png s" << i << "_gt.png\n";
  }
  list.close();
  const std::string net =
      "name: 'deeplab_style'\n"
      "layer { name: 'data' type: 'ImageSegData' top: 'data' top: 'label' top: 'data_dim'\n"
      "  include { phase: TRAIN }\n"
      "  transform_param { mirror: true crop_size: 9 mean_value: 104.008 mean_value: 116.669\n"
      "    mean_value: 122.675 scale: 0.01 }\n"
      "  image_data_param { root_folder: '" +
      dir_ + "/' source: '" + dir_ +
      "/seg.txt'\n"
      "    label_type: PIXEL batch_size: 2 shuffle: true } }\n"
      "layer { name: 'fc8' type: 'Convolution' bottom: 'data' top: 'fc8'\n"
      "  convolution_param { num_output: 2 kernel_size: 3 pad: 2 dilation: 2\n"
      "    weight_filler { type: 'gaussian' std: 0.01 } bias_filler { type: 'constant' } } }\n"
      "layer { name: 'label_shrink' type: 'Interp' bottom: 'label' top: 'label_shrink'\n"
      "  interp_param { shrink_factor: 1 pad_beg: 0 pad_end: 0 } }\n"
      "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'fc8' bottom: 'label_shrink' top: "
      "'loss'\n"
      "  include { phase: TRAIN } loss_param { ignore_label: 255 } }\n"
      "layer { name: 'silence' type: 'Silence' bottom: 'data_dim' }\n";
  SolverParameter solver;
  ReadProtoFromString(
      "base_lr: 0.1 lr_policy: 'fixed' momentum: 0.9 max_iter: 60 display: 0 "
      "random_seed: 5 snapshot_after_train: false",
      "solver", &solver);
  ReadProtoFromString(net, "net", solver.mutable_net_param());
  auto trained = CreateSolver<float>(solver);
  trained->Step(1);
  ASSERT_TRUE(trained->net()->has_blob("loss"));
  const float first = trained->net()->blob_by_name("loss")->cpu_data()[0];
  trained->Step(59);
  const float last = trained->net()->blob_by_name("loss")->cpu_data()[0];
  EXPECT_NEAR(first, std::log(2.0f), 0.05f);
  EXPECT_LT(last, 0.5f * first);
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
