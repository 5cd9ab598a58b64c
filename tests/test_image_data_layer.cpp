// ImageData: images from a list file in order or shuffled per pass, the same
// batches whatever the number of decode threads, resizing and grey reading,
// errors naming the list line and the file, and an exact resume. Encoded
// Datums decode as OpenCV decodes the same files. (Data layers have no
// backward: no gradient check.)
#include <gtest/gtest.h>

#ifdef CREMA_OPENCV

#include <fstream>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <set>
#include <string>
#include <vector>

#include "crema/data/image_data_layer.hpp"
#include "crema/data_transformer.hpp"
#include "crema/layer_factory.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/image_io.hpp"
#include "crema/util/io.hpp"
#include "solver_weights.hpp"
#include "test_common.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

class ImageDataLayerTest : public ScratchDirTest {
 protected:
  // Images 0..count-1 of 6x8 colour pixels: image i's value at (h, w, c) is
  // Pixel(i, h, w, c), so a served item tells which image and place it came
  // from. PNG is lossless, so values compare exactly.
  static int Pixel(int i, int h, int w, int c) { return (i * 29 + h * 7 + w * 3 + c * 50) % 256; }

  void SetUp() override {
    ScratchDirTest::SetUp();
    std::ofstream list(dir_ + "/list.txt");
    for (int i = 0; i < kImages; ++i) {
      cv::Mat image(6, 8, CV_8UC3);
      for (int h = 0; h < 6; ++h) {
        for (int w = 0; w < 8; ++w) {
          for (int c = 0; c < 3; ++c) image.at<cv::Vec3b>(h, w)[c] = Pixel(i, h, w, c);
        }
      }
      const std::string name = "img " + std::to_string(i) + ".png";  // a space in the path
      ASSERT_TRUE(cv::imwrite(dir_ + "/" + name, image));
      list << name << " " << i * 10 << "\n";
    }
  }

  LayerParameter Param(const std::string& extra, const std::string& transform = "") const {
    LayerParameter param;
    ReadProtoFromString(
        "name: 'images' type: 'ImageData' top: 'data' top: 'label' phase: TRAIN "
        "image_data_param { source: '" +
            dir_ + "/list.txt' root_folder: '" + dir_ + "/' batch_size: 3 " + extra +
            " } transform_param { " + transform + " }",
        "layer", &param);
    return param;
  }

  // The labels of `batches` batches served by a layer built from param.
  static std::vector<int> Labels(const LayerParameter& param, int batches,
                                 std::vector<float>* pixels = nullptr) {
    ImageDataLayer<float> layer(param);
    Blob<float> data, label;
    std::vector<Blob<float>*> bottom, top{&data, &label};
    layer.SetUp(bottom, top);
    std::vector<int> labels;
    for (int b = 0; b < batches; ++b) {
      layer.Forward(bottom, top);
      for (int i = 0; i < label.count(); ++i)
        labels.push_back(static_cast<int>(label.cpu_data()[i]));
      if (pixels) pixels->insert(pixels->end(), data.cpu_data(), data.cpu_data() + data.count());
    }
    return labels;
  }

  static constexpr int kImages = 7;
};

TEST_F(ImageDataLayerTest, ServesTheListInOrderAndWraps) {
  std::vector<float> pixels;
  const std::vector<int> labels = Labels(Param(""), 3, &pixels);
  EXPECT_EQ(labels, (std::vector<int>{0, 10, 20, 30, 40, 50, 60, 0, 10}));
  // Item 1 of batch 0 is image 1, channel 2 (red), row 3, column 5.
  EXPECT_EQ(pixels[1 * 3 * 48 + 2 * 48 + 3 * 8 + 5], Pixel(1, 3, 5, 2));
}

TEST_F(ImageDataLayerTest, ShufflesEachPassIntoAPermutationFromTheSeed) {
  Context::set_random_seed(5);
  const std::vector<int> first = Labels(Param("shuffle: true"), 7);  // 21 = 3 passes
  Context::set_random_seed(5);
  EXPECT_EQ(Labels(Param("shuffle: true"), 7), first);
  for (int pass = 0; pass < 3; ++pass) {
    const std::set<int> seen(first.begin() + pass * kImages, first.begin() + (pass + 1) * kImages);
    EXPECT_EQ(seen.size(), static_cast<size_t>(kImages)) << "pass " << pass;
  }
  EXPECT_NE(std::vector<int>(first.begin(), first.begin() + kImages),
            std::vector<int>(first.begin() + kImages, first.begin() + 2 * kImages))
      << "each pass is shuffled anew";
  Context::set_random_seed(6);
  EXPECT_NE(Labels(Param("shuffle: true"), 7), first);
}

TEST_F(ImageDataLayerTest, BatchesDoNotDependOnTheNumberOfDecodeThreads) {
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    Context::set_random_seed(9);
    std::vector<float> pixels;
    LayerParameter param = Param("shuffle: true decode_threads: " + std::to_string(threads),
                                 "crop_size: 4 mirror: true");
    Labels(param, 5, &pixels);
    results.push_back(pixels);
  }
  EXPECT_EQ(results[1], results[0]);
  EXPECT_EQ(results[2], results[0]);
}

TEST_F(ImageDataLayerTest, ResizesAndReadsGrey) {
  ImageDataLayer<float> layer(Param("new_height: 5 new_width: 9 is_color: false"));
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  EXPECT_EQ(data.shape(), (std::vector<int>{3, 1, 5, 9}));
  layer.Forward(bottom, top);
  const cv::Mat expected = ReadImageToCVMat(dir_ + "/img 0.png", ImageColor::kGray, 5, 9);
  EXPECT_EQ(data.cpu_data()[2 * 9 + 4], expected.at<uint8_t>(2, 4));
}

// A resize the file asks for is held to the pixel limit before memory is
// taken: 100000 x 100000 is refused at set-up, naming the file and the limit.
TEST_F(ImageDataLayerTest, AResizeAboveThePixelLimitIsRefused) {
  ImageDataLayer<float> layer(Param("new_height: 100000 new_width: 100000"));
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  try {
    layer.SetUp(bottom, top);
    FAIL() << "a resize to 10^10 pixels must be refused";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("img 0.png resized: an image of 100000 x 100000"), std::string::npos)
        << message;
    EXPECT_NE(message.find("CREMA_MAX_IMAGE_PIXELS"), std::string::npos) << message;
  }
}

TEST_F(ImageDataLayerTest, ErrorsNameTheListLineAndTheFile) {
  std::ofstream(dir_ + "/broken.png") << "not an image";
  std::ofstream(dir_ + "/bad.txt") << "img 0.png 0\nbroken.png 1\nimg 1.png 2\n";
  LayerParameter param = Param("");
  param.mutable_image_data_param()->set_source(dir_ + "/bad.txt");
  try {
    Labels(param, 1);
    FAIL() << "a corrupt image was served";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.txt:2"), std::string::npos) << what;
    EXPECT_NE(what.find("broken.png"), std::string::npos) << what;
  }
  std::ofstream(dir_ + "/missing.txt") << "img 0.png 0\nnowhere.png 1\nimg 1.png 2\n";
  param.mutable_image_data_param()->set_source(dir_ + "/missing.txt");
  try {
    Labels(param, 1);
    FAIL() << "a missing image was served";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nowhere.png"), std::string::npos) << e.what();
  }
  std::ofstream(dir_ + "/empty.txt") << "\n";
  param.mutable_image_data_param()->set_source(dir_ + "/empty.txt");
  try {
    Labels(param, 1);
    FAIL() << "an empty list set up";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty.txt names no images"), std::string::npos)
        << e.what();
  }
  std::ofstream(dir_ + "/nolabel.txt") << "img 0.png\n";
  param.mutable_image_data_param()->set_source(dir_ + "/nolabel.txt");
  EXPECT_THROW(Labels(param, 1), Error);
}

// An image of the first one's size turned on its side (8 x 6 after 6 x 8)
// was transformed into the batch and read across rows, silently.
TEST_F(ImageDataLayerTest, AnImageOfAnotherShapeIsNamed) {
  ASSERT_TRUE(cv::imwrite(dir_ + "/turned.png", cv::Mat(8, 6, CV_8UC3, cv::Scalar(1, 2, 3))));
  std::ofstream(dir_ + "/turned.txt") << "img 0.png 0\nturned.png 1\nimg 1.png 2\n";
  LayerParameter param = Param("");
  param.mutable_image_data_param()->set_source(dir_ + "/turned.txt");
  try {
    Labels(param, 1);
    FAIL() << "an 8 x 6 image was served in a batch of 6 x 8";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("turned.txt:2"), std::string::npos) << what;
    EXPECT_NE(what.find("transforms to 3x8x6, the first image to 3x6x8"), std::string::npos)
        << what;
  }
}

TEST_F(ImageDataLayerTest, ATrainingRunResumesBitwise) {
  const std::string net =
      "name: 'images'"
      "layer { name: 'data' type: 'ImageData' top: 'data' top: 'label'"
      "  transform_param { scale: 0.004 crop_size: 5 mirror: true }"
      "  image_data_param { source: '" +
      dir_ + "/list.txt' root_folder: '" + dir_ +
      "/'"
      "    batch_size: 3 shuffle: true decode_threads: 2 } }"
      "layer { name: 'fc' type: 'InnerProduct' bottom: 'data' top: 'fc'"
      "  inner_product_param { num_output: 70 weight_filler { type: 'gaussian' std: 0.1 } } }"
      "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'fc' bottom: 'label' top: 'loss' }";
  SolverParameter param;
  ReadProtoFromString(
      "base_lr: 0.01 momentum: 0.9 lr_policy: 'fixed' max_iter: 40 display: 0 "
      "random_seed: 3 snapshot: 20 snapshot_prefix: '" +
          dir_ + "/run'",
      "solver", &param);
  ReadProtoFromString(net, "net", param.mutable_net_param());
  std::vector<std::vector<float>> straight;
  {
    auto solver = CreateSolver<float>(param);
    solver->Step(40);
    straight = LearnableWeights(*solver);
  }
  auto resumed = CreateSolver<float>(param);
  resumed->Restore(dir_ + "/run_iter_20.solverstate");
  resumed->Step(20);
  EXPECT_EQ(LearnableWeights(*resumed), straight);  // bitwise
}

// Encoded Datums (as convert_imageset --encoded writes them) transform to
// what OpenCV's own decode of the same file gives.
class EncodedDatumTest : public ScratchDirTest {};

TEST_F(EncodedDatumTest, DecodesLikeOpenCvInColourAndGrey) {
  cv::Mat image(5, 7, CV_8UC3);
  for (int h = 0; h < 5; ++h) {
    for (int w = 0; w < 7; ++w) image.at<cv::Vec3b>(h, w) = cv::Vec3b(h * 40, w * 30, 200 - h * w);
  }
  for (const std::string format : {"png", "jpg"}) {
    const std::string file = dir_ + "/image." + format;
    ASSERT_TRUE(cv::imwrite(file, image));
    for (bool grey : {false, true}) {
      SCOPED_TRACE(format + (grey ? " grey" : " colour"));
      Datum datum;
      ReadImageToDatum(file, 4, 0, 0, ImageColor::kAsStored, format, &datum);
      ASSERT_TRUE(datum.encoded());
      TransformationParameter transform;
      if (grey) transform.set_force_gray(true);
      DataTransformer<float> transformer(transform, TEST);
      const std::vector<int> shape = transformer.InferBlobShape(datum);
      const cv::Mat expected = cv::imread(file, grey ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
      ASSERT_EQ(shape, (std::vector<int>{1, expected.channels(), 5, 7}));
      std::vector<float> out(expected.channels() * 35);
      transformer.Transform(datum, out.data());
      for (int c = 0; c < expected.channels(); ++c) {
        for (int h = 0; h < 5; ++h) {
          for (int w = 0; w < 7; ++w) {
            EXPECT_EQ(out[(c * 5 + h) * 7 + w],
                      expected.ptr<uint8_t>(h)[w * expected.channels() + c])
                << c << "," << h << "," << w;
          }
        }
      }
    }
  }
}

TEST_F(EncodedDatumTest, ACorruptEncodedRecordIsAUserError) {
  Datum datum;
  datum.set_encoded(true);
  datum.set_data("certainly not a PNG");
  DataTransformer<float> transformer(TransformationParameter(), TEST);
  std::vector<float> out(100);
  try {
    transformer.Transform(datum, out.data(), std::vector<int>{1, 1, 10, 10});
    FAIL() << "a corrupt record decoded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not decode"), std::string::npos) << e.what();
  }
}

// A corrupt image in an encoded database: the Data layer's error names the
// record's key and the database.
TEST_F(EncodedDatumTest, ACorruptImageInADatabaseIsNamedByItsKey) {
  cv::Mat image(4, 4, CV_8UC1, cv::Scalar(7));
  ASSERT_TRUE(cv::imwrite(dir_ + "/good.png", image));
  Datum good;
  ReadImageToDatum(dir_ + "/good.png", 1, 0, 0, ImageColor::kAsStored, "png", &good);
  Datum bad = good;
  bad.set_data(good.data().substr(0, 20));  // a truncated PNG
  auto db = db::GetDB("lmdb");
  db->Open(dir_ + "/images_lmdb", db::NEW);
  auto txn = db->NewTransaction();
  txn->Put("00000000_good.png", good.SerializeAsString());
  txn->Put("00000001_bad.png", bad.SerializeAsString());
  txn->Commit();
  db->Close();
  LayerParameter param;
  ReadProtoFromString(
      "name: 'data' type: 'Data' top: 'data' top: 'label' phase: TRAIN "
      "data_param { source: '" +
          dir_ + "/images_lmdb' batch_size: 2 backend: LMDB }",
      "layer", &param);
  auto layer = LayerRegistry<float>::CreateLayer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer->SetUp(bottom, top);
  try {
    layer->Forward(bottom, top);
    FAIL() << "a truncated image was served";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("00000001_bad.png"), std::string::npos) << what;
    EXPECT_NE(what.find("images_lmdb"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
