// AnnotatedData: a record written with the SSD fork's field numbers decodes;
// every box-moving step (expansion, a sampled crop, both resize modes,
// mirroring, all of them with distortion) keeps each box on its pixels;
// a batch without boxes gives one row of -1s; settings it would not apply
// are refused by name; and training through it resumes bitwise.
#ifdef CREMA_OPENCV

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <opencv2/core/core.hpp>
#include <opencv2/imgproc/imgproc.hpp>
#include <string>
#include <vector>

#include "crema/data/annotated_data_layer.hpp"
#include "crema/data/detection_augmentation.hpp"
#include "crema/data_reader.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/db.hpp"
#include "crema/util/io.hpp"
#include "solver_weights.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

// A box in pixels [x0, x1) x [y0, y1) of one group, drawn in `value`.
struct PixelBox {
  int group;
  int x0, y0, x1, y1;
  int value;
};

// Protocol-buffer wire format written by hand, field by field, as a
// program built from the fork's schema writes it.
class Wire {
 public:
  Wire& Varint(int field, uint64_t value) {
    Stream().WriteTag(field << 3 | 0);
    Stream().WriteVarint64(value);
    return *this;
  }
  Wire& Float(int field, float value) {
    Stream().WriteTag(field << 3 | 5);
    Stream().WriteLittleEndian32(FloatBits(value));
    return *this;
  }
  Wire& Bytes(int field, const std::string& bytes) {
    Stream().WriteTag(field << 3 | 2);
    Stream().WriteVarint32(static_cast<uint32_t>(bytes.size()));
    Stream().WriteString(bytes);
    return *this;
  }
  std::string str() {
    coded_.reset();
    output_.reset();
    return bytes_;
  }

 private:
  static uint32_t FloatBits(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  google::protobuf::io::CodedOutputStream& Stream() {
    if (!coded_) {
      output_.reset(new google::protobuf::io::StringOutputStream(&bytes_));
      coded_.reset(new google::protobuf::io::CodedOutputStream(output_.get()));
    }
    return *coded_;
  }
  std::string bytes_;
  std::unique_ptr<google::protobuf::io::StringOutputStream> output_;
  std::unique_ptr<google::protobuf::io::CodedOutputStream> coded_;
};

// A colour image, black but for its boxes, as a fork-written record.
std::string ForkRecord(int width, int height, const std::vector<PixelBox>& boxes) {
  std::string pixels(3 * width * height, '\0');
  for (const PixelBox& box : boxes) {
    for (int c = 0; c < 3; ++c) {
      for (int y = box.y0; y < box.y1; ++y) {
        for (int x = box.x0; x < box.x1; ++x) {
          pixels[(c * height + y) * width + x] = static_cast<char>(box.value);
        }
      }
    }
  }
  Wire datum;
  datum.Varint(1, 3).Varint(2, height).Varint(3, width).Bytes(4, pixels).Varint(5, 0);
  Wire record;
  record.Bytes(1, datum.str()).Varint(2, 0);  // type BBOX
  for (size_t i = 0; i < boxes.size(); ++i) {
    const PixelBox& box = boxes[i];
    Wire bbox;
    bbox.Float(1, static_cast<float>(box.x0) / width)
        .Float(2, static_cast<float>(box.y0) / height)
        .Float(3, static_cast<float>(box.x1) / width)
        .Float(4, static_cast<float>(box.y1) / height)
        .Varint(6, 0);
    Wire annotation;
    annotation.Varint(1, static_cast<uint64_t>(i)).Bytes(2, bbox.str());
    Wire group;
    group.Varint(1, static_cast<uint64_t>(box.group)).Bytes(2, annotation.str());
    record.Bytes(3, group.str());
  }
  return record.str();
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto db = db::GetDB("lmdb");
  db->Open(path, db::NEW);
  auto txn = db->NewTransaction();
  for (size_t i = 0; i < records.size(); ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "%08zu", i);
    txn->Put(key, records[i]);
  }
  txn->Commit();
}

// Two images of 48 x 32 pixels with two boxes each (groups 1 and 2, drawn
// in 120 and 240), and one without boxes.
const int kWidth = 48, kHeight = 32;
const std::vector<std::vector<PixelBox>> kImages{{{1, 4, 6, 20, 18, 120}, {2, 26, 12, 44, 30, 240}},
                                                 {{1, 30, 2, 46, 14, 120}, {2, 2, 16, 22, 31, 240}},
                                                 {}};

class AnnotatedDataTest : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    std::vector<std::string> records;
    for (const auto& boxes : kImages) records.push_back(ForkRecord(kWidth, kHeight, boxes));
    WriteRecords(dir_ + "/boxes", records);
  }
  LayerParameter Param(int batch, const std::string& extra = "") const {
    LayerParameter param;
    ReadProtoFromString(
        "name: 'data' type: 'AnnotatedData' phase: TRAIN "
        "data_param { source: '" +
            dir_ + "/boxes' batch_size: " + std::to_string(batch) + " backend: LMDB } " + extra,
        "layer", &param);
    return param;
  }
};

TEST_F(AnnotatedDataTest, AForkWrittenRecordDecodes) {
  AnnotatedDataLayer<float> layer(Param(3));
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  EXPECT_EQ(data.shape(), (std::vector<int>{3, 3, kHeight, kWidth}));
  // Pixel (x 10, y 10) of image 0, channel 1, is in its first box.
  EXPECT_EQ(data.data_at(0, 1, 10, 10), 120);
  EXPECT_EQ(data.data_at(0, 1, 0, 0), 0);
  ASSERT_EQ(label.shape(), (std::vector<int>{1, 1, 4, 8}));
  const std::vector<float> first(label.cpu_data(), label.cpu_data() + 8);
  EXPECT_EQ(first, (std::vector<float>{0, 1, 0, 4.f / 48, 6.f / 32, 20.f / 48, 18.f / 32, 0}));
  const std::vector<float> last(label.cpu_data() + 24, label.cpu_data() + 32);
  EXPECT_EQ(last, (std::vector<float>{1, 2, 1, 2.f / 48, 16.f / 32, 22.f / 48, 31.f / 32, 0}));
}

TEST_F(AnnotatedDataTest, ABatchWithoutBoxesHasOneRowOfMinusOnes) {
  LayerParameter param = Param(1);
  AnnotatedDataLayer<float> layer(param);
  Blob<float> data, label;
  std::vector<Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  for (int i = 0; i < 3; ++i) layer.Forward(bottom, top);  // the third image has none
  ASSERT_EQ(label.shape(), (std::vector<int>{1, 1, 1, 8}));
  EXPECT_EQ(std::vector<float>(label.cpu_data(), label.cpu_data() + 8),
            std::vector<float>(8, -1.f));
}

// The pixels of `value` (within 20) in item `item` of a colour batch: their
// bounding rectangle in pixels, as [x0, y0, x1, y1).
std::vector<int> PaintedRectangle(const Blob<float>& data, int item, int value) {
  int x0 = data.width(), y0 = data.height(), x1 = -1, y1 = -1;
  for (int y = 0; y < data.height(); ++y) {
    for (int x = 0; x < data.width(); ++x) {
      if (std::abs(data.data_at(item, 0, y, x) - value) > 20) continue;
      x0 = std::min(x0, x);
      y0 = std::min(y0, y);
      x1 = std::max(x1, x + 1);
      y1 = std::max(y1, y + 1);
    }
  }
  return {x0, y0, x1, y1};
}

// Each step that moves pixels keeps every box on its own: over many
// batches, the label row of each surviving box covers exactly the pixels
// painted in its group's value (within one pixel, for resizing).
// Images that change size on the way are resized back to one size.
const std::string kBack = "resize_param { height: 32 width: 48 interp_mode: NEAREST }";

TEST_F(AnnotatedDataTest, BoxesFollowTheImage) {
  const std::vector<std::pair<std::string, std::string>> steps{
      {"expansion",
       "transform_param { expand_param { prob: 1 max_expand_ratio: 3 } " + kBack + " }"},
      {"sampled crop",
       "transform_param { " + kBack +
           " } "
           "annotated_data_param { batch_sampler { sampler { min_scale: 0.3 max_scale: 1 "
           "min_aspect_ratio: 0.5 max_aspect_ratio: 2 } sample_constraint { min_jaccard_overlap: "
           "0.1 } max_sample: 1 max_trials: 50 } }"},
      {"warp",
       "transform_param { resize_param { resize_mode: WARP height: 40 width: 24 "
       "interp_mode: NEAREST } }"},
      {"fit and pad",
       "transform_param { resize_param { resize_mode: FIT_LARGE_SIZE_AND_PAD "
       "height: 40 width: 40 interp_mode: NEAREST pad_value: 0 } }"},
      {"mirror", "transform_param { mirror: true }"},
      {"all, with distortion",
       "transform_param { mirror: true resize_param { height: 36 width: 36 interp_mode: "
       "NEAREST } expand_param { prob: 0.5 max_expand_ratio: 2 } distort_param { "
       "brightness_prob: 0.5 brightness_delta: 8 } } annotated_data_param { batch_sampler { "
       "sampler { min_scale: 0.5 } sample_constraint { min_object_coverage: 0.5 } "
       "max_trials: 20 max_sample: 1 } }"}};
  for (const auto& step : steps) {
    SCOPED_TRACE(step.first);
    AnnotatedDataLayer<float> layer(Param(2, step.second));
    Blob<float> data, label;
    std::vector<Blob<float>*> bottom, top{&data, &label};
    layer.SetUp(bottom, top);
    const bool resized = step.second.find("resize_param") != std::string::npos;
    const float tolerance = resized ? 1.f : 0.f;
    const float brightness = step.second.find("distort") != std::string::npos ? 8.f : 0.f;
    int checked = 0;
    for (int pass = 0; pass < 15; ++pass) {
      layer.Forward(bottom, top);
      for (int row = 0; row < label.height(); ++row) {
        const float* r = label.cpu_data() + row * 8;
        if (r[0] < 0) continue;
        const int value = r[1] == 1 ? 120 : 240;
        std::vector<int> painted = PaintedRectangle(data, static_cast<int>(r[0]), value);
        if (brightness > 0 && painted[2] < 0) continue;  // the value moved too far
        const float w = static_cast<float>(data.width()), h = static_cast<float>(data.height());
        EXPECT_NEAR(r[3] * w, painted[0], tolerance + 1e-3) << "row " << row;
        EXPECT_NEAR(r[4] * h, painted[1], tolerance + 1e-3) << "row " << row;
        EXPECT_NEAR(r[5] * w, painted[2], tolerance + 1e-3) << "row " << row;
        EXPECT_NEAR(r[6] * h, painted[3], tolerance + 1e-3) << "row " << row;
        ++checked;
      }
    }
    EXPECT_GT(checked, 10);
  }
}

// Expansion and crops, on their own, keep every box on its pixels exactly.
TEST(SsdAugmentationTest, ExpansionAndCropsAreExactToThePixel) {
  Context::set_random_seed(11);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE(trial);
    cv::Mat image(kHeight, kWidth, CV_8UC1, cv::Scalar(0));
    std::vector<ssd::AnnotatedBox> boxes;
    for (const PixelBox& box : kImages[trial % 2]) {
      image(cv::Rect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0)) = box.value;
      ssd::AnnotatedBox annotated;
      annotated.group_label = box.group;
      annotated.box = {static_cast<float>(box.x0) / kWidth, static_cast<float>(box.y0) / kHeight,
                       static_cast<float>(box.x1) / kWidth, static_cast<float>(box.y1) / kHeight};
      boxes.push_back(annotated);
    }
    ExpansionParameter expand;
    expand.set_max_expand_ratio(2.5f);
    ssd::ExpandImage(expand, {0}, &image, &boxes);
    Sampler sampler;
    sampler.set_min_scale(0.3f);
    sampler.set_min_aspect_ratio(0.5f);
    sampler.set_max_aspect_ratio(2);
    ssd::CropImage(ssd::SampleWindow(sampler), EmitConstraint(), &image, &boxes);
    for (const ssd::AnnotatedBox& box : boxes) {
      const int value = box.group_label == 1 ? 120 : 240;
      cv::Mat mask;
      cv::inRange(image, cv::Scalar(value), cv::Scalar(value), mask);
      const cv::Rect painted = cv::boundingRect(mask);
      EXPECT_NEAR(box.box.xmin * image.cols, painted.x, 1e-3);
      EXPECT_NEAR(box.box.ymin * image.rows, painted.y, 1e-3);
      EXPECT_NEAR(box.box.xmax * image.cols, painted.x + painted.width, 1e-3);
      EXPECT_NEAR(box.box.ymax * image.rows, painted.y + painted.height, 1e-3);
    }
  }
}

TEST_F(AnnotatedDataTest, SettingsItWouldNotApplyAreRefusedByName) {
  const auto refusal = [&](const std::string& extra) {
    return ErrorMessageOf([&] { AnnotatedDataLayer<float> layer(Param(2, extra)); });
  };
  EXPECT_EQ(refusal("transform_param { crop_size: 8 }"),
            "layer 'data' (AnnotatedData): crop_size is not applied with boxes; crop by "
            "batch_sampler instead");
  EXPECT_EQ(refusal("transform_param { resize_param { resize_mode: FIT_SMALL_SIZE height: 8 "
                    "width: 8 } }"),
            "layer 'data' (AnnotatedData): resize_param: resize_mode FIT_SMALL_SIZE gives "
            "images of different sizes, which one batch cannot hold; use WARP or "
            "FIT_LARGE_SIZE_AND_PAD");
  EXPECT_EQ(refusal("transform_param { resize_param { prob: 0.5 height: 8 width: 8 } }"),
            "layer 'data' (AnnotatedData): resize_param: prob 0.5 would leave some images at "
            "their own size; give prob 1");
  EXPECT_EQ(refusal("annotated_data_param { batch_sampler { sampler { min_scale: 0 } } }"),
            "layer 'data' (AnnotatedData): batch_sampler: the scales must satisfy 0 < min_scale "
            "<= max_scale <= 1; got 0 and 1");
  EXPECT_EQ(refusal("transform_param { rotation_degrees: 10 }"),
            "layer 'data' (AnnotatedData): random_resized_crop and rotation_degrees would move "
            "the pixels without the boxes; crop by batch_sampler and resize by resize_param "
            "instead");
  EXPECT_EQ(refusal("transform_param { distort_param { hue_prob: 2 } }"),
            "layer 'data' (AnnotatedData): distort_param: hue_prob 2 is not a probability in "
            "[0, 1]");
  // A plain data layer refuses the SSD steps rather than ignore them.
  LayerParameter plain = Param(2, "transform_param { expand_param { max_expand_ratio: 2 } }");
  plain.set_type("Data");
  EXPECT_NE(ErrorMessageOf([&] {
              DataTransformer<float> transformer(plain.transform_param(), TRAIN);
            }).find("are applied only by AnnotatedData"),
            std::string::npos);
}

// 100 + snapshot + resume + 100 iterations of a small SSD equal 200 in one
// go, bitwise, with sampling, expansion, distortion and mirroring on.
TEST_F(AnnotatedDataTest, TrainingResumesBitwise) {
  const std::string net =
      "name: 'ssd_resume'"
      "layer { name: 'data' type: 'AnnotatedData' top: 'data' top: 'label'"
      "  include { phase: TRAIN }"
      "  transform_param { scale: 0.004 mirror: true"
      "    resize_param { height: 16 width: 16 interp_mode: LINEAR interp_mode: AREA }"
      "    expand_param { prob: 0.5 max_expand_ratio: 2 }"
      "    distort_param { brightness_prob: 0.5 brightness_delta: 16 contrast_prob: 0.5"
      "      contrast_lower: 0.5 contrast_upper: 1.5 hue_prob: 0.5 hue_delta: 18"
      "      saturation_prob: 0.5 saturation_lower: 0.5 saturation_upper: 1.5 } }"
      "  data_param { source: '" +
      dir_ +
      "/boxes' batch_size: 2 backend: LMDB }"
      "  annotated_data_param { batch_sampler { }"
      "    batch_sampler { sampler { min_scale: 0.3 max_scale: 1 min_aspect_ratio: 0.5"
      "      max_aspect_ratio: 2 } sample_constraint { min_jaccard_overlap: 0.3 }"
      "      max_sample: 1 max_trials: 50 } } }"
      "layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'"
      "  convolution_param { num_output: 4 kernel_size: 3 pad: 1 stride: 4"
      "    weight_filler { type: 'xavier' } } }"
      "layer { name: 'relu' type: 'ReLU' bottom: 'conv' top: 'conv' }"
      "layer { name: 'loc' type: 'Convolution' bottom: 'conv' top: 'loc'"
      "  convolution_param { num_output: 8 kernel_size: 1 weight_filler { type: 'xavier' } } }"
      "layer { name: 'loc_perm' type: 'Permute' bottom: 'loc' top: 'loc_perm'"
      "  permute_param { order: 0 order: 2 order: 3 order: 1 } }"
      "layer { name: 'loc_flat' type: 'Flatten' bottom: 'loc_perm' top: 'loc_flat' }"
      "layer { name: 'conf' type: 'Convolution' bottom: 'conv' top: 'conf'"
      "  convolution_param { num_output: 6 kernel_size: 1 weight_filler { type: 'xavier' } } }"
      "layer { name: 'conf_perm' type: 'Permute' bottom: 'conf' top: 'conf_perm'"
      "  permute_param { order: 0 order: 2 order: 3 order: 1 } }"
      "layer { name: 'conf_flat' type: 'Flatten' bottom: 'conf_perm' top: 'conf_flat' }"
      "layer { name: 'prior' type: 'PriorBox' bottom: 'conv' bottom: 'data' top: 'prior'"
      "  prior_box_param { min_size: 6 max_size: 12 clip: true variance: 0.1 variance: 0.1"
      "    variance: 0.2 variance: 0.2 } }"
      "layer { name: 'loss' type: 'MultiBoxLoss' bottom: 'loc_flat' bottom: 'conf_flat'"
      "  bottom: 'prior' bottom: 'label' top: 'loss' propagate_down: true propagate_down: true"
      "  propagate_down: false propagate_down: false"
      "  multibox_loss_param { num_classes: 3 overlap_threshold: 0.3 neg_pos_ratio: 3"
      "    neg_overlap: 0.3 } }";
  SolverParameter param;
  ReadProtoFromString(
      "base_lr: 0.01 momentum: 0.9 lr_policy: 'fixed' max_iter: 200 "
      "display: 0 random_seed: 7 snapshot: 100 snapshot_prefix: '" +
          dir_ + "/ssd'",
      "solver", &param);
  ReadProtoFromString(net, "net", param.mutable_net_param());
  std::vector<std::vector<float>> straight, at_snapshot;
  {
    auto solver = CreateSolver<float>(param);
    solver->Step(100);
    at_snapshot = LearnableWeights(*solver);
    solver->Step(100);
    straight = LearnableWeights(*solver);
  }
  auto resumed = CreateSolver<float>(param);
  resumed->Restore(dir_ + "/ssd_iter_100.solverstate");
  EXPECT_EQ(LearnableWeights(*resumed), at_snapshot);
  resumed->Step(100);
  EXPECT_NE(LearnableWeights(*resumed), at_snapshot);
  EXPECT_EQ(LearnableWeights(*resumed), straight);  // bitwise
}

}  // namespace
}  // namespace crema

#endif  // CREMA_OPENCV
