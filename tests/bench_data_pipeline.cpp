// Data pipeline benchmark: (1) how fast the shared reader and the prefetching
// Data layer deliver Fashion-MNIST batches; (2) whether prefetching hides the
// reading: a LeNet training step fed from the LMDB against the same step fed
// from memory (MemoryData, same images), ITERATIONS timed steps of each per
// round (default 500) in alternating chunks of 5, ROUNDS rounds (default 5),
// each round's ratio of the median steps and of the total times. With
// "shuffle" the Data layers read each pass in an order of their own
// (data_param.shuffle: every record sought by its key).
//   bench_data_pipeline TRAIN_LMDB [ITERATIONS] [ROUNDS] [shuffle]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "crema/data/data_layer.hpp"
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

// One training step (forward, backward, plain SGD update).
void Step(crema::Net<float>* net) {
  net->ClearParamDiffs();
  net->ForwardBackward();
  for (auto* param : net->learnable_params()) param->scale_diff(0.01f);
  net->Update();
}

// Times `steps` steps, one by one, into `times` (seconds), after one
// untimed step: the first after a switch of nets finds the caches holding
// the other net's weights, for either net alike.
void TimeSteps(crema::Net<float>* net, int steps, std::vector<double>* times) {
  Step(net);
  for (int i = 0; i < steps; ++i) {
    crema::Timer timer;
    timer.Start();
    Step(net);
    timer.Stop();
    times->push_back(timer.Seconds());
  }
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
    std::fprintf(stderr,
                 "usage: bench_data_pipeline TRAIN_LMDB [ITERATIONS] [ROUNDS] [shuffle]\n");
    return 1;
  }
  const std::string source = argv[1];
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 500;
  const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  const bool shuffle = argc > 4 && std::string(argv[4]) == "shuffle";
  const int batch = 64;

  // The memory-fed net steps over the LMDB's first 16 batches: the same
  // kind of images, since a step's time depends on the values it computes
  // on (zeros, the gradients' magnitudes).
  const int memory_batches = 16;
  std::vector<float> images(batch * memory_batches * 784), labels(batch * memory_batches);

  // (1) The reader and prefetch thread alone.
  {
    crema::LayerParameter param;
    param.set_name("mnist");
    param.set_phase(crema::TRAIN);
    param.mutable_transform_param()->set_scale(0.00390625f);
    param.mutable_data_param()->set_source(source);
    param.mutable_data_param()->set_batch_size(batch);
    param.mutable_data_param()->set_backend(crema::DataParameter::LMDB);
    param.mutable_data_param()->set_shuffle(shuffle);
    crema::DataLayer<float> layer(param);
    crema::Blob<float> data, label;
    std::vector<crema::Blob<float>*> bottom, top{&data, &label};
    layer.SetUp(bottom, top);
    for (int i = 0; i < memory_batches; ++i) {
      layer.Forward(bottom, top);
      std::copy(data.cpu_data(), data.cpu_data() + data.count(), &images[i * data.count()]);
      std::copy(label.cpu_data(), label.cpu_data() + label.count(), &labels[i * label.count()]);
    }
    const int batches = 2000;
    crema::Timer timer;
    timer.Start();
    for (int i = 0; i < batches; ++i) layer.Forward(bottom, top);
    timer.Stop();
    std::printf("reader+prefetch%s: %.0f images/s (batch %d, %d batches)\n",
                shuffle ? " (shuffled)" : "", batch * batches / timer.Seconds(), batch, batches);
  }

  // (2) LeNet fed from the LMDB vs from memory, alternated.
  const std::string lmdb_layer =
      "layer { name: 'mnist' type: 'Data' top: 'data' top: 'label'"
      "  transform_param { scale: 0.00390625 }"
      "  data_param { source: '" +
      source + "' batch_size: 64 backend: LMDB" + (shuffle ? " shuffle: true" : "") + " } }";
  const std::string memory_layer =
      "layer { name: 'mnist' type: 'MemoryData' top: 'data' top: 'label'"
      "  memory_data_param { batch_size: 64 channels: 1 height: 28 width: 28 } }";
  // Both nets live side by side and take turns in short chunks of steps,
  // many times per round, so that a change in the machine's speed (another
  // tenant of the host, the clock) falls on both alike. A round compares the
  // median steps (a burst of another process lengthens a few steps, not the
  // median) and prints the ratio of its total times beside it.
  auto lmdb_net = MakeNet(lmdb_layer);
  auto memory_net = MakeNet(memory_layer);
  static_cast<crema::MemoryDataLayer<float>*>(memory_net->layers()[0].get())
      ->Reset(images.data(), labels.data(), batch * memory_batches);
  const auto* lmdb_layer_of_net =
      static_cast<const crema::DataLayer<float>*>(lmdb_net->layers()[0].get());
  const int chunk_steps = 5, chunks = std::max(1, iterations / chunk_steps);
  std::vector<double> lmdb_times, memory_times, ratios, total_ratios;
  for (int round = 0; round < rounds; ++round) {
    const size_t waits_before = lmdb_layer_of_net->waits();
    std::vector<double> lmdb_steps, memory_steps;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      TimeSteps(lmdb_net.get(), chunk_steps, &lmdb_steps);
      TimeSteps(memory_net.get(), chunk_steps, &memory_steps);
    }
    lmdb_times.push_back(Median(lmdb_steps));
    memory_times.push_back(Median(memory_steps));
    ratios.push_back(memory_times.back() / lmdb_times.back());
    total_ratios.push_back(std::accumulate(memory_steps.begin(), memory_steps.end(), 0.0) /
                           std::accumulate(lmdb_steps.begin(), lmdb_steps.end(), 0.0));
    std::printf(
        "round %d: median step from LMDB %.3f ms, from memory %.3f ms, ratio %.3f (of the "
        "totals %.3f; the LMDB net waited for a batch %zu times)\n",
        round + 1, 1e3 * lmdb_times.back(), 1e3 * memory_times.back(), ratios.back(),
        total_ratios.back(), lmdb_layer_of_net->waits() - waits_before);
  }
  const double lmdb = Median(lmdb_times), memory = Median(memory_times);
  std::printf("LeNet training step (median of %d rounds): LMDB %.3f ms, memory %.3f ms\n", rounds,
              1e3 * lmdb, 1e3 * memory);
  std::printf(
      "ratio memory/LMDB step time: median of the rounds %.3f, lowest %.3f; of the totals: "
      "median %.3f, lowest %.3f (1.0 = reading fully hidden; goal >= 0.97 in every round)\n",
      Median(ratios), *std::min_element(ratios.begin(), ratios.end()), Median(total_ratios),
      *std::min_element(total_ratios.begin(), total_ratios.end()));
  std::printf("LeNet training throughput from LMDB: %.0f images/s\n", batch / lmdb);
  return 0;
}
