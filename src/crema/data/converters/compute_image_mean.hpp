// The per-pixel mean of a Datum database's records, as Caffe's
// compute_image_mean computes it: the BlobProto (1 x C x H x W) a
// transform_param's mean_file reads.
#ifndef CREMA_DATA_CONVERTERS_COMPUTE_IMAGE_MEAN_HPP_
#define CREMA_DATA_CONVERTERS_COMPUTE_IMAGE_MEAN_HPP_

#include <string>
#include <vector>

#include "crema/proto/crema.pb.h"

namespace crema {

// Reads every record of the database at `source` (backend "lmdb" or
// "leveldb"). Encoded records (JPEG/PNG) are decoded as stored, in builds
// with OpenCV; without it they are a user error. An empty database, a record
// that is not a Datum and records of different shapes are user errors naming
// the database and the record's key.
BlobProto ComputeImageMean(const std::string& source, const std::string& backend);

// The mean of each channel of a mean image.
std::vector<double> ChannelMeans(const BlobProto& mean);

}  // namespace crema

#endif  // CREMA_DATA_CONVERTERS_COMPUTE_IMAGE_MEAN_HPP_
