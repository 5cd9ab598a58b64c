// Images (JPEG, PNG and what else OpenCV's imgcodecs reads) to and from
// Datums, for builds with OpenCV (CREMA_OPENCV). A Datum holds an image as
// raw bytes (channels x height x width, BGR for colour) or, with encoded set,
// as the image file's bytes. A file that is missing or does not decode, and
// an encoded Datum that does not decode, are user errors (Error) naming the
// file or the record; so are a JPEG, PNG or BMP that ends early or is out of
// order (read from its header before decoding), and an image of more than
// MaxImagePixels() pixels (checked from the header before any pixel memory
// is taken, for the formats whose header Crema reads).
#ifndef CREMA_UTIL_IMAGE_IO_HPP_
#define CREMA_UTIL_IMAGE_IO_HPP_

#ifdef CREMA_OPENCV

#include <opencv2/core/core.hpp>
#include <string>

#include "crema/proto/crema.pb.h"

namespace crema {

// How to read an image's colour: as stored (grey or colour, alpha dropped),
// as three BGR channels, or as one grey channel.
enum class ImageColor { kAsStored, kColor, kGray };

// Reads an image file; resizes it to height x width when both are positive
// (bilinear, as Caffe does). Returns 8-bit BGR (3 channels) or grey (1).
cv::Mat ReadImageToCVMat(const std::string& filename, ImageColor color, int height = 0,
                         int width = 0);

// Reads a label image (one grey channel whose values are classes); resizes
// it to height x width when both are positive by nearest neighbour, so no
// class is invented between two.
cv::Mat ReadLabelImageToCVMat(const std::string& filename, int height = 0, int width = 0);

// Decodes an encoded Datum; `what` names the record in errors (its key).
cv::Mat DecodeDatumToCVMat(const Datum& datum, ImageColor color, const std::string& what);

// An 8-bit image's interleaved pixels (HWC, as OpenCV holds them) into
// planes (CHW, as a Datum and a blob hold them): `planes` has room for
// channels x rows x cols bytes.
void ImageToPlanes(const cv::Mat& image, uint8_t* planes);

// An 8-bit image (1 or 3 channels) into a raw Datum: channels x height x
// width bytes, the label left as it is.
void CVMatToDatum(const cv::Mat& image, Datum* datum);

// The lower-case extension of a file name, "jpeg" given as "jpg"; "" when
// its last component has none.
std::string ImageExtension(const std::string& filename);

// A file into a Datum with its label. encoding "" stores raw pixels;
// "jpg"/"png"/... stores the image encoded in that format (channels, height
// and width set to the image's), and the file's own bytes when it already is
// one whose decode is that image: stored with the channels asked for, and not
// resized (no re-encoding, so a JPEG loses nothing more).
void ReadImageToDatum(const std::string& filename, int label, int height, int width,
                      ImageColor color, const std::string& encoding, Datum* datum);

}  // namespace crema

#endif  // CREMA_OPENCV
#endif  // CREMA_UTIL_IMAGE_IO_HPP_
