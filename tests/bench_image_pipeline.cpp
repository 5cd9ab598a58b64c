// Image pipeline benchmark: how close the ImageData layer comes to the rate at
// which OpenCV alone decodes the same JPEGs (issue 15's goal: the layer at
// >= 0.85 of the raw decode rate x the threads it uses). Driven by
// scripts/bench/image_pipeline.sh, which alternates the modes and takes medians.
//   bench_image_pipeline make-jpegs PNG_LIST PNG_ROOT OUT_DIR COUNT
//       The first COUNT images of a `path label` list (Fashion-MNIST's 28x28
//       grey PNGs), upscaled to 256x256, coloured (viridis colour map, so the
//       JPEGs carry real chroma) and written as OUT_DIR/NNNNN.jpg (OpenCV's
//       default quality 95) with OUT_DIR/list.txt.
//   bench_image_pipeline raw LIST ROOT THREADS
//       Reads every file's bytes into memory (untimed), then times
//       cv::imdecode(IMREAD_COLOR) of all of them on THREADS threads.
//   bench_image_pipeline layer LIST ROOT THREADS
//       An ImageData layer (batch 64, shuffle, decode_threads THREADS, crop 227,
//       mirror, TRAIN) forwarded over the list once after a first, untimed batch.
// Each mode prints one line "<mode> threads=T images=N seconds=S images/s=R".
#ifdef CREMA_OPENCV

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <opencv2/core/core.hpp>
#include <opencv2/imgcodecs/imgcodecs.hpp>
#include <opencv2/imgproc/imgproc.hpp>
#include <string>
#include <thread>
#include <vector>

#include "crema/common.hpp"
#include "crema/data/image_data_layer.hpp"
#include "crema/util/benchmark.hpp"
#include "crema/util/io.hpp"

namespace {

struct Entry {
  std::string path;
  int label;
};

// The `path label` lines of a list file (the label after the last space).
std::vector<Entry> ReadList(const std::string& list) {
  std::ifstream in(list);
  if (!in) {
    std::fprintf(stderr, "bench_image_pipeline: cannot read %s\n", list.c_str());
    std::exit(1);
  }
  std::vector<Entry> entries;
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    entries.push_back({line.substr(0, space), std::atoi(line.c_str() + space + 1)});
  }
  return entries;
}

void Report(const char* mode, int threads, size_t images, double seconds) {
  std::printf("%s threads=%d images=%zu seconds=%.4f images/s=%.1f\n", mode, threads, images,
              seconds, images / seconds);
}

int MakeJpegs(const std::string& list, const std::string& root, const std::string& out, int count) {
  const std::vector<Entry> entries = ReadList(list);
  if (static_cast<int>(entries.size()) < count) {
    std::fprintf(stderr, "bench_image_pipeline: %s has %zu images, fewer than %d\n", list.c_str(),
                 entries.size(), count);
    return 1;
  }
  std::ofstream out_list(out + "/list.txt");
  for (int i = 0; i < count; ++i) {
    const cv::Mat grey = cv::imread(root + "/" + entries[i].path, cv::IMREAD_GRAYSCALE);
    if (grey.empty()) {
      std::fprintf(stderr, "bench_image_pipeline: cannot read %s/%s\n", root.c_str(),
                   entries[i].path.c_str());
      return 1;
    }
    cv::Mat large, colour;
    cv::resize(grey, large, cv::Size(256, 256), 0, 0, cv::INTER_LINEAR);
    cv::applyColorMap(large, colour, cv::COLORMAP_VIRIDIS);
    char name[32];
    std::snprintf(name, sizeof(name), "%05d.jpg", i);
    if (!cv::imwrite(out + "/" + name, colour)) {
      std::fprintf(stderr, "bench_image_pipeline: cannot write %s/%s\n", out.c_str(), name);
      return 1;
    }
    out_list << name << " " << entries[i].label << "\n";
  }
  return out_list.good() ? 0 : 1;
}

int Raw(const std::string& list, const std::string& root, int threads) {
  const std::vector<Entry> entries = ReadList(list);
  std::vector<std::vector<uchar>> files;
  for (const Entry& entry : entries) {
    std::ifstream in(root + entry.path, std::ios::binary);
    files.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::atomic<size_t> next(0);
  std::atomic<size_t> failed(0);
  auto decode = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      if (cv::imdecode(files[i], cv::IMREAD_COLOR).empty()) ++failed;
    }
  };
  crema::Timer timer;
  timer.Start();
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(decode);
  decode();
  for (std::thread& worker : workers) worker.join();
  timer.Stop();
  if (failed) {
    std::fprintf(stderr, "bench_image_pipeline: %zu images failed to decode\n", failed.load());
    return 1;
  }
  Report("raw", threads, files.size(), timer.Seconds());
  return 0;
}

int Layer(const std::string& list, const std::string& root, int threads) {
  const int batch_size = 64;
  const size_t images = ReadList(list).size();
  crema::LayerParameter param;
  crema::ReadProtoFromString(
      "name: 'images' type: 'ImageData' top: 'data' top: 'label' phase: TRAIN "
      "image_data_param { source: '" +
          list + "' root_folder: '" + root + "' batch_size: 64 shuffle: true decode_threads: " +
          std::to_string(threads) + " } transform_param { crop_size: 227 mirror: true }",
      "layer", &param);
  crema::ImageDataLayer<float> layer(param);
  crema::Blob<float> data, label;
  std::vector<crema::Blob<float>*> bottom, top{&data, &label};
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);  // the first batch: thread start-up, untimed
  const size_t batches = (images + batch_size - 1) / batch_size;
  crema::Timer timer;
  timer.Start();
  for (size_t b = 0; b < batches; ++b) layer.Forward(bottom, top);
  timer.Stop();
  Report("layer", threads, batches * batch_size, timer.Seconds());
  return 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: bench_image_pipeline make-jpegs PNG_LIST PNG_ROOT OUT_DIR COUNT\n"
               "       bench_image_pipeline raw|layer LIST ROOT THREADS\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  if (mode == "make-jpegs" && argc == 6)
    return MakeJpegs(argv[2], argv[3], argv[4], std::atoi(argv[5]));
  if ((mode == "raw" || mode == "layer") && argc == 5) {
    const int threads = std::atoi(argv[4]);
    if (threads < 1) return Usage();
    std::string root = argv[3];
    if (!root.empty() && root.back() != '/') root += '/';
    return mode == "raw" ? Raw(argv[2], root, threads) : Layer(argv[2], root, threads);
  }
  return Usage();
}

#else  // !CREMA_OPENCV

#include <cstdio>

int main() {
  std::fprintf(stderr, "bench_image_pipeline: this build has no OpenCV (CREMA_OPENCV)\n");
  return 2;
}

#endif  // CREMA_OPENCV
