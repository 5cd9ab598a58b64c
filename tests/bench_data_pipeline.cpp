// Data pipeline benchmark: (1) how fast the shared reader and the prefetching
// Data layer deliver Fashion-MNIST batches; (2) whether prefetching hides the
// reading: a LeNet training step fed from the LMDB against the same step fed
// from memory (MemoryData, same shape), alternated, median of the rounds.
//   bench_data_pipeline TRAIN_LMDB [ITERATIONS]
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "crema/layers/data_layer.hpp"
#include "crema/layers/memory_data_layer.hpp"
#include "crema/net.hpp"
#include "crema/util/benchmark.hpp"
#include "crema/util/io.hpp"

namespace {

const char* kLeNetBody = R"(
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  param { lr_mult: 1 } param { lr_mult: 2 }
  convolution_param { num_output: 20 kernel_size: 5 stride: 1
    weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  param { lr_mult: 1 } param { lr_mult: 2 }
  convolution_param { num_output: 50 kernel_size: 5 stride: 1
    weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
  param { lr_mult: 1 } param { lr_mult: 2 }
  inner_product_param { num_output: 500 weight_filler { type: "xavier" }
    bias_filler { type: "constant" } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
  param { lr_mult: 1 } param { lr_mult: 2 }
  inner_product_param { num_output: 10 weight_filler { type: "xavier" }
    bias_filler { type: "constant" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
)";

std::unique_ptr<crema::Net<float>> MakeNet(const std::string& data_layer) {
  crema::NetParameter param;
  crema::ReadProtoFromString("name: 'LeNet' " + data_layer + kLeNetBody, "LeNet", &param);
  param.mutable_state()->set_phase(crema::TRAIN);
  return std::unique_ptr<crema::Net<float>>(new crema::Net<float>(param));
}

// Seconds per training step (forward, backward, plain SGD update).
double StepSeconds(crema::Net<float>* net, int iterations) {
  for (int i = 0; i < 5; ++i) {  // warm-up: buffers, prefetch queue filled
    net->ClearParamDiffs();
    net->ForwardBackward();
  }
  crema::Timer timer;
  timer.Start();
  for (int i = 0; i < iterations; ++i) {
    net->ClearParamDiffs();
    net->ForwardBackward();
    for (auto* param : net->learnable_params()) param->scale_diff(0.01f);
    net->Update();
  }
  timer.Stop();
  return timer.Seconds() / iterations;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 1;
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_data_pipeline TRAIN_LMDB [ITERATIONS]\n");
    return 1;
  }
  const std::string source = argv[1];
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 200;
  const int batch = 64;

  // (1) The reader and prefetch thread alone.
  {
    crema::LayerParameter param;
    param.set_name("mnist");
    param.set_phase(crema::TRAIN);
    param.mutable_transform_param()->set_scale(0.00390625f);
    param.mutable_data_param()->set_source(source);
    param.mutable_data_param()->set_batch_size(batch);
    param.mutable_data_param()->set_backend(crema::DataParameter::LMDB);
    crema::DataLayer<float> layer(param);
    crema::Blob<float> data, label;
    std::vector<crema::Blob<float>*> bottom, top{&data, &label};
    layer.SetUp(bottom, top);
    const int batches = 2000;
    crema::Timer timer;
    timer.Start();
    for (int i = 0; i < batches; ++i) layer.Forward(bottom, top);
    timer.Stop();
    std::printf("reader+prefetch: %.0f images/s (batch %d, %d batches)\n",
                batch * batches / timer.Seconds(), batch, batches);
  }

  // (2) LeNet fed from the LMDB vs from memory, alternated.
  const std::string lmdb_layer =
      "layer { name: 'mnist' type: 'Data' top: 'data' top: 'label'"
      "  transform_param { scale: 0.00390625 }"
      "  data_param { source: '" + source + "' batch_size: 64 backend: LMDB } }";
  const std::string memory_layer =
      "layer { name: 'mnist' type: 'MemoryData' top: 'data' top: 'label'"
      "  memory_data_param { batch_size: 64 channels: 1 height: 28 width: 28 } }";
  std::vector<float> images(64 * 16 * 784), labels(64 * 16);
  for (size_t i = 0; i < images.size(); ++i) images[i] = float(i % 256) / 256.f;
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = float(i % 10);
  std::vector<double> lmdb_times, memory_times;
  for (int round = 0; round < 3; ++round) {
    auto lmdb_net = MakeNet(lmdb_layer);
    lmdb_times.push_back(StepSeconds(lmdb_net.get(), iterations));
    lmdb_net.reset();
    auto memory_net = MakeNet(memory_layer);
    static_cast<crema::MemoryDataLayer<float>*>(memory_net->layers()[0].get())
        ->Reset(images.data(), labels.data(), 64 * 16);
    memory_times.push_back(StepSeconds(memory_net.get(), iterations));
    std::printf("round %d: step from LMDB %.3f ms, from memory %.3f ms\n", round + 1,
                1e3 * lmdb_times.back(), 1e3 * memory_times.back());
  }
  const double lmdb = Median(lmdb_times), memory = Median(memory_times);
  std::printf("LeNet training step (median of 3): LMDB %.3f ms, memory %.3f ms\n", 1e3 * lmdb,
              1e3 * memory);
  std::printf("ratio memory/LMDB step time: %.3f (1.0 = reading fully hidden; goal >= 0.97)\n",
              memory / lmdb);
  std::printf("LeNet training throughput from LMDB: %.0f images/s\n", batch / lmdb);
  return 0;
}
