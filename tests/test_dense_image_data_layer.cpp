// DenseImageData (SegNet): image and label-image pairs from a list file, in
// order or shuffled, the labels read in grey and resized by nearest
// neighbour, mirror and crop applied to both alike, the transform_param
// settings that would move the image alone refused, bad lists and pairs
// named. (Data layers have no backward: no gradient check.)
#include <gtest/gtest.h>

#ifdef CREMA_OPENCV

#include <fstream>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <set>
#include <string>
#include <vector>

#include "crema/data/dense_image_data_layer.hpp"
#include "crema/layer_factory.hpp"
#include "crema/util/io.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class DenseImageDataLayerTest : public ScratchDirTest {
 protected:
  // Image i is 6x8 colour; its labels are 6x8 grey with a value unique to
  // (i, h, w), which is also the image's channel 0 there, so a served item
  // shows where each pixel came from and whether image and labels moved
  // together. PNG is lossless.
  static int LabelOf(int i, int h, int w) { return i * 48 + h * 8 + w; }

  void SetUp() override {
    ScratchDirTest::SetUp();
    std::ofstream list(dir_ + "/train.txt");
    for (int i = 0; i < kImages; ++i) {
      cv::Mat image(6, 8, CV_8UC3), labels(6, 8, CV_8UC1);
      for (int h = 0; h < 6; ++h) {
        for (int w = 0; w < 8; ++w) {
          labels.at<uint8_t>(h, w) = LabelOf(i, h, w);
          image.at<cv::Vec3b>(h, w) = cv::Vec3b(LabelOf(i, h, w), 7 * i, 200);
        }
      }
      ASSERT_TRUE(cv::imwrite(dir_ + "/img" + std::to_string(i) + ".png", image));
      ASSERT_TRUE(cv::imwrite(dir_ + "/lab" + std::to_string(i) + ".png", labels));
      list << "img" << i << ".png lab" << i << ".png\n";
    }
  }

  // The layer as SegNet's segnet_train.prototxt writes it.
  LayerParameter Param(const std::string& extra, const std::string& transform = "") const {
    LayerParameter param;
    ReadProtoFromString(
        "name: 'data' type: 'DenseImageData' top: 'data' top: 'label' phase: TRAIN "
        "dense_image_data_param { source: '" +
            dir_ + "/train.txt' root_folder: '" + dir_ + "/' batch_size: 2 " + extra + " } " +
            (transform.empty() ? "" : "transform_param { " + transform + " }"),
        "layer", &param);
    return param;
  }

  struct Served {
    std::vector<float> data, labels;
    std::vector<int> data_shape, label_shape;
  };
  static Served Serve(const LayerParameter& param, int batches) {
    DenseImageDataLayer<float> layer(param);
    Blob<float> data, label;
    std::vector<Blob<float>*> bottom, top{&data, &label};
    layer.SetUp(bottom, top);
    Served served;
    for (int b = 0; b < batches; ++b) {
      layer.Forward(bottom, top);
      served.data.insert(served.data.end(), data.cpu_data(), data.cpu_data() + data.count());
      served.labels.insert(served.labels.end(), label.cpu_data(), label.cpu_data() + label.count());
    }
    served.data_shape = data.shape();
    served.label_shape = label.shape();
    return served;
  }

  static constexpr int kImages = 3;
};

TEST_F(DenseImageDataLayerTest, ServesPairsInOrderAndWraps) {
  const Served served = Serve(Param(""), 2);
  EXPECT_EQ(served.data_shape, (std::vector<int>{2, 3, 6, 8}));
  EXPECT_EQ(served.label_shape, (std::vector<int>{2, 1, 6, 8}));
  const int images[] = {0, 1, 2, 0};
  for (int item = 0; item < 4; ++item) {
    for (int h = 0; h < 6; ++h) {
      for (int w = 0; w < 8; ++w) {
        const int i = images[item];
        EXPECT_EQ(served.labels[item * 48 + h * 8 + w], LabelOf(i, h, w));
        EXPECT_EQ(served.data[item * 144 + 48 + h * 8 + w], 7 * i);  // channel 1
      }
    }
  }
}

// mirror and crop_height x crop_width: the labels follow the image pixel for
// pixel, and over 12 items both mirrored and plain ones, and more than one
// crop place, occur.
TEST_F(DenseImageDataLayerTest, MirrorAndCropMoveImageAndLabelsTogether) {
  Context::set_random_seed(3);
  const Served served = Serve(Param("mirror: true crop_height: 4 crop_width: 5 shuffle: true"), 6);
  EXPECT_EQ(served.data_shape, (std::vector<int>{2, 3, 4, 5}));
  std::set<bool> mirrored;
  std::set<int> corners;
  for (int item = 0; item < 12; ++item) {
    for (int p = 0; p < 20; ++p) {
      ASSERT_EQ(served.data[item * 60 + p], served.labels[item * 20 + p]) << item << " " << p;
    }
    const float* labels = &served.labels[item * 20];
    mirrored.insert(labels[1] < labels[0]);
    corners.insert(static_cast<int>(labels[0]) % 48);
  }
  EXPECT_EQ(mirrored.size(), 2u);
  EXPECT_GT(corners.size(), 1u);
  Context::set_random_seed(3);
  EXPECT_EQ(Serve(Param("mirror: true crop_height: 4 crop_width: 5 shuffle: true"), 6).data,
            served.data)
      << "the same seed serves the same items";
}

// Resized to 12 x 16, the labels are the nearest ones (no value invented),
// the image bilinear.
TEST_F(DenseImageDataLayerTest, LabelsResizeByNearestNeighbour) {
  const Served served = Serve(Param("new_height: 12 new_width: 16"), 1);
  EXPECT_EQ(served.label_shape, (std::vector<int>{2, 1, 12, 16}));
  for (int h = 0; h < 12; ++h) {
    for (int w = 0; w < 16; ++w) {
      EXPECT_EQ(served.labels[h * 16 + w], LabelOf(0, h / 2, w / 2)) << h << " " << w;
    }
  }
}

TEST_F(DenseImageDataLayerTest, LabelsAreScaledAsInSegnetAndTheImageIsTransformed) {
  const Served served = Serve(Param("", "scale: 0.5 mean_value: 100"), 1);
  EXPECT_EQ(served.labels[9], LabelOf(0, 1, 1) * 0.5f);
  EXPECT_EQ(served.data[48 * 2 + 9], (200 - 100) * 0.5f);  // channel 2
}

TEST_F(DenseImageDataLayerTest, BadSettingsAndPairsNameTheLayerAndLine) {
  EXPECT_NE(ErrorMessageOf([&] {
              Serve(Param("", "mirror: true"), 1);
            }).find("would move the image and not its labels"),
            std::string::npos);
  EXPECT_NE(ErrorMessageOf([&] {
              Serve(Param("crop_height: 7 crop_width: 5"), 1);
            }).find("a crop of 5x7 does not fit the image of 8x6"),
            std::string::npos);
  cv::imwrite(dir_ + "/small.png", cv::Mat(3, 4, CV_8UC1, cv::Scalar(1)));
  std::ofstream(dir_ + "/bad.txt") << "img0.png lab0.png\nimg1.png small.png\n";
  LayerParameter param = Param("");
  param.mutable_dense_image_data_param()->set_source(dir_ + "/bad.txt");
  const std::string message = ErrorMessageOf([&] { Serve(param, 1); });
  EXPECT_NE(message.find("layer 'data' (DenseImageData)"), std::string::npos) << message;
  EXPECT_NE(message.find("bad.txt:2: the image is 8x6, its labels 4x3"), std::string::npos)
      << message;
  std::ofstream(dir_ + "/one_column.txt") << "img0.png\n";
  param.mutable_dense_image_data_param()->set_source(dir_ + "/one_column.txt");
  EXPECT_NE(ErrorMessageOf([&] { Serve(param, 1); }).find("one_column.txt:1"), std::string::npos);
}

TEST_F(DenseImageDataLayerTest, RegisteredByTypeString) {
  EXPECT_STREQ(LayerRegistry<float>::CreateLayer(Param(""))->type(), "DenseImageData");
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
