// The mean image of a Datum database.
#include "crema/data/converters/compute_image_mean.hpp"

#include "crema/common.hpp"
#include "crema/util/db.hpp"
#ifdef CREMA_OPENCV
#include "crema/util/image_io.hpp"
#endif

namespace crema {

namespace {

// A record as raw pixels: encoded ones decoded as stored (as Caffe's
// DecodeDatumNative), the others as they are.
void DecodeRecordForMean(const std::string& source, const std::string& key, Datum* datum) {
  if (!datum->encoded()) return;
#ifdef CREMA_OPENCV
  const int label = datum->label();
  CVMatToDatum(DecodeDatumToCVMat(*datum, ImageColor::kAsStored, source + ": record '" + key + "'"),
               datum);
  datum->set_label(label);
#else
  CREMA_FAIL(source << ": record '" << key
                    << "' is an encoded image (JPEG/PNG); decoding it needs OpenCV, which this "
                       "build does not have (CREMA_OPENCV)");
#endif
}

}  // namespace

BlobProto ComputeImageMean(const std::string& source, const std::string& backend) {
  auto db = db::GetDB(backend);
  db->Open(source, db::READ);
  auto cursor = db->NewCursor();
  CREMA_REQUIRE(cursor->valid(), source << ": the database holds no records");
  Datum datum;
  std::vector<double> sum;
  BlobProto mean;
  int count = 0;
  for (; cursor->valid(); cursor->Next(), ++count) {
    const std::string key = cursor->key();
    CREMA_REQUIRE(datum.ParseFromString(cursor->value()),
                  source << ": record '" << key << "' is not a Datum");
    DecodeRecordForMean(source, key, &datum);
    // Negative sizes would make a size_t product of exabytes.
    CREMA_REQUIRE(datum.channels() > 0 && datum.height() > 0 && datum.width() > 0,
                  source << ": record '" << key << "' is " << datum.channels() << "x"
                         << datum.height() << "x" << datum.width()
                         << "; expected positive channels, height and width");
    const size_t size = static_cast<size_t>(datum.channels()) * datum.height() * datum.width();
    if (count == 0) {
      sum.assign(size, 0.0);
      mean.set_num(1);
      mean.set_channels(datum.channels());
      mean.set_height(datum.height());
      mean.set_width(datum.width());
    }
    CREMA_REQUIRE(sum.size() == size && datum.channels() == mean.channels() &&
                      datum.height() == mean.height(),
                  source << ": record '" << key << "' is " << datum.channels() << "x"
                         << datum.height() << "x" << datum.width() << ", the first "
                         << mean.channels() << "x" << mean.height() << "x" << mean.width());
    if (!datum.data().empty()) {
      CREMA_REQUIRE(datum.data().size() == size, source << ": record '" << key << "' holds "
                                                        << datum.data().size() << " bytes for "
                                                        << size << " pixels");
      for (size_t i = 0; i < size; ++i) sum[i] += static_cast<uint8_t>(datum.data()[i]);
    } else {
      CREMA_REQUIRE(static_cast<size_t>(datum.float_data_size()) == size,
                    source << ": record '" << key << "' holds " << datum.float_data_size()
                           << " values for " << size << " pixels");
      for (size_t i = 0; i < size; ++i) sum[i] += datum.float_data(static_cast<int>(i));
    }
    if ((count + 1) % 10000 == 0) LOG(INFO) << "Processed " << count + 1 << " files.";
  }
  for (double value : sum) mean.add_data(static_cast<float>(value / count));
  LOG(INFO) << "Processed " << count << " files.";
  return mean;
}

std::vector<double> ChannelMeans(const BlobProto& mean) {
  const int dim = mean.height() * mean.width();
  std::vector<double> means(mean.channels(), 0.0);
  for (int c = 0; c < mean.channels(); ++c) {
    double channel_sum = 0;
    for (int i = 0; i < dim; ++i) channel_sum += mean.data(c * dim + i);
    means[c] = dim > 0 ? channel_sum / dim : 0.0;
  }
  return means;
}

}  // namespace crema
