// Converts MNIST-format (idx) image and label files, gzipped or not, into an
// LMDB or LevelDB database of Datum records laid out as Caffe's converter
// writes them (keys "%08d", 1 x rows x cols uint8 data, the label), so the
// two converters' databases hold identical records.
#ifndef CREMA_DATA_CONVERTERS_CONVERT_MNIST_HPP_
#define CREMA_DATA_CONVERTERS_CONVERT_MNIST_HPP_

#include <string>

namespace crema {

// Bad files (wrong magic number, truncated, mismatched counts) and an
// existing database are user errors naming the file.
void ConvertMnist(const std::string& image_path, const std::string& label_path,
                  const std::string& db_path, const std::string& backend);

}  // namespace crema

#endif  // CREMA_DATA_CONVERTERS_CONVERT_MNIST_HPP_
