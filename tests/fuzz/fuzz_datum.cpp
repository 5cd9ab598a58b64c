// (e) A Datum record as a data layer reads it from a database: the first
// byte picks the transformation (crop, mirror, scale, mean values, colour),
// the rest is the serialized Datum, raw or encoded (PNG/JPEG bytes, decoded
// with OpenCV). A record the transformation cannot take must be an Error.
#include <vector>

#include "crema/blob.hpp"
#include "crema/data_transformer.hpp"
#include "fuzz_common.hpp"
#ifdef CREMA_OPENCV
#include <opencv2/imgcodecs.hpp>
#endif

namespace {
crema::TransformationParameter Transformation(uint8_t choice) {
  crema::TransformationParameter param;
  if (choice & 1) param.set_crop_size(3);
  if (choice & 2) param.set_mirror(true);
  if (choice & 4) param.set_scale(1.0f / 255);
  if (choice & 8) param.add_mean_value(100);
  if (choice & 16) {
    param.add_mean_value(10);
    param.add_mean_value(20);
  }
  if (choice & 32) param.set_force_color(true);
  if (choice & 64) param.set_force_gray(true);
  return param;
}

std::string Seed(uint8_t choice, const crema::Datum& datum) {
  return std::string(1, static_cast<char>(choice)) + datum.SerializeAsString();
}
}  // namespace

namespace crema {
namespace fuzz {
void WriteSeeds(const std::string& dir) {
  Datum datum;
  datum.set_channels(3);
  datum.set_height(4);
  datum.set_width(5);
  datum.set_label(7);
  std::string bytes(3 * 4 * 5, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  datum.set_data(bytes);
  WriteFile(dir + "/raw", Seed(0x0f, datum));
  Datum floats = datum;
  floats.clear_data();
  for (int i = 0; i < 60; ++i) floats.add_float_data(i * 0.5f);
  WriteFile(dir + "/float", Seed(0x03, floats));
#ifdef CREMA_OPENCV
  cv::Mat image(4, 5, CV_8UC3);
  for (int i = 0; i < 60; ++i) image.data[i] = static_cast<uint8_t>(i * 7);
  for (const char* format : {".png", ".jpg"}) {
    std::vector<uchar> encoded;
    cv::imencode(format, image, encoded);
    Datum encoded_datum;
    encoded_datum.set_encoded(true);
    encoded_datum.set_label(1);
    encoded_datum.set_data(std::string(encoded.begin(), encoded.end()));
    WriteFile(dir + "/encoded" + format, Seed(0x07, encoded_datum));
  }
#endif
}
}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  crema::Datum datum;
  if (!datum.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  try {
    crema::DataTransformer<float> transformer(Transformation(data[0]),
                                              data[0] & 128 ? crema::TEST : crema::TRAIN);
    crema::Blob<float> blob(transformer.InferBlobShape(datum));
    transformer.Transform(datum, &blob);
  } catch (const crema::Error&) {
  }
  // A data layer shapes its batch from the first record: a later record of
  // another shape must be refused, not read or written past its end.
  try {
    crema::DataTransformer<float> transformer(Transformation(data[0]), crema::TRAIN);
    const int side = data[0] & 1 ? 3 : 4;
    crema::Blob<float> batch_item(std::vector<int>{1, 3, side, side + (data[0] & 1 ? 0 : 1)});
    transformer.Transform(datum, &batch_item);
  } catch (const crema::Error&) {
  }
  return 0;
}
