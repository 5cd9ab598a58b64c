// The crema command-line tool: one binary, one command per action.
//   crema train --solver=S [--weights=W | --snapshot=STATE] [--gpu=0,1|all]
//               [--solver_count=N]   (under mpirun: one such run per process)
//   crema test --model=NET --weights=W [--iterations=50] [--gpu=N]
//   crema time --model=NET [--iterations=50] [--phase=TRAIN] [--gpu=N]
//   crema classify --model=DEPLOY --weights=W --images=A.png,B.png|LIST.txt
//                  [--labels=L] [--mean_file=M] [--scale=S] [--top_k=5] [--gpu=N]
//   crema detect --model=DEPLOY --weights=W --images=A.png,B.jpg|LIST.txt
//                [--threshold=0.5] [--labelmap=L] [--mean_value=104,117,123]
//                [--scale=S] [--output_dir=DIR] [--gpu=N]
//   crema device_query [--gpu=N]
//   crema export --model=DEPLOY --weights=W --output=X.onnx [--opset=13]
#include <gflags/gflags.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "classify.hpp"
#include "crema/common.hpp"
#include "crema/evaluation.hpp"
#include "crema/export/onnx_export.hpp"
#include "crema/filler.hpp"
#include "crema/layer_factory.hpp"
#include "crema/net.hpp"
#include "crema/parallel.hpp"
#include "crema/reporter.hpp"
#include "crema/sgd_solvers.hpp"
#include "crema/util/benchmark.hpp"
#include "crema/util/thread_pool.hpp"
#include "crema/util/upgrade_proto.hpp"
#include "detect.hpp"
#include "image_list.hpp"
#include "split_list.hpp"
#ifdef CREMA_PYTHON_LAYER
#include "crema/python_layer/python_layer.hpp"
#endif

DECLARE_string(labels);  // classify.cpp
DECLARE_int32(top_k);
DEFINE_string(gpu, "", "GPU device ids to use, e.g. '0' or '0,1', or 'all'; empty runs on the CPU");
DEFINE_string(model, "", "The net prototxt");
DEFINE_string(phase, "TRAIN", "The net phase: TRAIN or TEST");
DEFINE_int32(level, 0, "The net level (for include/exclude rules)");
DEFINE_string(stage, "", "Comma-separated net stages (for include/exclude rules)");
DEFINE_int32(iterations, 50, "The number of iterations to run");
DEFINE_string(solver, "", "The solver prototxt (train)");
DEFINE_string(weights, "",
              "Trained weights to start from (train: fine-tuning) or to test; comma-separated "
              "files are loaded in turn");
DEFINE_string(snapshot, "", "A .solverstate to resume training from");
DEFINE_string(sigint_effect, "stop",
              "What SIGINT (Ctrl-C) does while training: stop, snapshot, none");
DEFINE_string(sighup_effect, "snapshot", "What SIGHUP does while training: stop, snapshot, none");
DEFINE_int32(solver_count, 1,
             "train on the CPU with this many solver threads (data-parallel; with --gpu, one "
             "solver per GPU instead)");
DEFINE_string(output, "", "The file to write (export: the ONNX model)");
DEFINE_string(metrics, "",
              "train: the metrics file to write, one JSON object per line (default: beside "
              "glog's INFO log file, as <that file>.metrics.jsonl)");
DEFINE_string(confusion, "",
              "test: also write the classifier's confusion matrix as this PNG (with the "
              "per-class report --labels gives)");
DEFINE_int32(opset, crema::kOnnxMinOpset, "The ONNX opset to write (export)");
DEFINE_int32(threads, 0,
             "CPU threads shared by BLAS and Crema's kernels (0: CREMA_NUM_THREADS or the cores)");

namespace {

using Command = std::function<int()>;

std::map<std::string, Command>& Commands() {
  static std::map<std::string, Command> commands;
  return commands;
}

struct RegisterCommand {
  RegisterCommand(const std::string& name, Command command) { Commands()[name] = command; }
};

using crema::SplitList;

// The devices --gpu names ("all": every device), validated.
std::vector<int> GpuIds() {
  std::vector<int> ids;
  if (FLAGS_gpu.empty()) return ids;
  const int count = crema::Context::DeviceCount();
  if (FLAGS_gpu == "all") {
    CREMA_REQUIRE(count > 0, "--gpu=all: no CUDA device on this machine");
    for (int i = 0; i < count; ++i) ids.push_back(i);
    return ids;
  }
  for (const std::string& item : SplitList(FLAGS_gpu)) {
    int id = -1;
    size_t used = 0;
    try {
      id = std::stoi(item, &used);
    } catch (...) {
      used = 0;
    }
    CREMA_REQUIRE(used == item.size() && used > 0, "--gpu: '" << item << "' is not a device id");
    CREMA_REQUIRE(id >= 0 && id < count, "--gpu: device " << id << " asked for, this machine has "
                                                          << count << " CUDA device(s)");
    ids.push_back(id);
  }
  return ids;
}

// Puts this thread in CPU mode, or in GPU mode on the first --gpu device.
void SetUpMode() {
  // 0 keeps the default; anything else must be a count the machine can run.
  if (FLAGS_threads != 0) {
    crema::RequireRunnableThreads(FLAGS_threads, "--threads");
    crema::SetThreadBudget(FLAGS_threads);
  }
  const std::vector<int> gpus = GpuIds();
  if (gpus.empty()) {
    LOG(INFO) << "Use CPU.";
    crema::Context::set_mode(crema::Context::CPU);
  } else {
    LOG(INFO) << "Use GPU with device ID " << gpus[0];
    crema::Context::SetDevice(gpus[0]);
    crema::Context::set_mode(crema::Context::GPU);
  }
}

crema::Phase PhaseFlag() {
  if (FLAGS_phase == "TRAIN") return crema::TRAIN;
  if (FLAGS_phase == "TEST") return crema::TEST;
  CREMA_FAIL("--phase must be TRAIN or TEST, got '" << FLAGS_phase << "'");
}

// Prints what this build and machine offer: the CUDA devices (or that there
// are none), the CPU thread budget and the registered layer types.
int DeviceQuery() {
  LOG(INFO) << "Crema " << CREMA_VERSION_STRING;
  LOG(INFO) << "CPU threads (budget shared by BLAS and the kernel pool): " << crema::ThreadBudget();
#ifndef CREMA_CUDA
  LOG(INFO) << "Build: CPU only";
#else
  LOG(INFO) << "Build: CUDA";
#endif
  const std::vector<std::string> types = crema::LayerRegistry<float>::LayerTypeList();
  std::string list;
  for (const auto& type : types) list += (list.empty() ? "" : " ") + type;
  LOG(INFO) << "Layer types registered: " << types.size() << ": " << list;
  const int count = crema::Context::DeviceCount();
  LOG(INFO) << "CUDA devices: " << count;
  std::vector<int> ids = GpuIds();
  if (ids.empty()) {
    for (int id = 0; id < count; ++id) ids.push_back(id);
  }
  for (int id : ids) {
    crema::Context::SetDevice(id);
    crema::Context::DeviceQuery();
  }
  return 0;
}
RegisterCommand register_device_query("device_query", DeviceQuery);

// One training step's passes over every layer, forward then backward (a
// deploy net's Backward would skip every layer for want of a loss).
void ForwardEveryLayer(crema::Net<float>& net) {
  for (size_t i = 0; i < net.layers().size(); ++i) {
    net.layers()[i]->Forward(net.bottom_vecs()[i], net.top_vecs()[i]);
  }
}
void BackwardEveryLayer(crema::Net<float>& net) {
  for (int i = static_cast<int>(net.layers().size()) - 1; i >= 0; --i) {
    net.layers()[i]->Backward(net.top_vecs()[i], net.bottom_need_backward()[i],
                              net.bottom_vecs()[i]);
  }
}

// Milliseconds per step of --iterations whole steps, timed without stopping
// between layers.
double TimeWholeSteps(crema::Net<float>& net) {
  crema::Timer timer;
  timer.Start();
  for (int j = 0; j < FLAGS_iterations; ++j) {
    ForwardEveryLayer(net);
    BackwardEveryLayer(net);
  }
  timer.Stop();
  return timer.MilliSeconds() / FLAGS_iterations;
}

// Milliseconds per forward pass over --iterations whole forward passes with
// nothing between them, as a deploy net runs. The layer-by-layer figures also
// pay for what each backward pass leaves behind: blobs the next forward pass
// reads back or refolds, and caches the backward filled.
double TimeForwardPasses(crema::Net<float>& net) {
  net.Forward();  // untimed: settles what the last backward pass left behind
  crema::Timer timer;
  timer.Start();
  for (int j = 0; j < FLAGS_iterations; ++j) net.Forward();
  timer.Stop();
  return timer.MilliSeconds() / FLAGS_iterations;
}

// Sums over --iterations steps timed layer by layer (ms).
struct LayerTimes {
  std::vector<double> forward, backward;  // per layer
  double forward_total = 0, backward_total = 0, total = 0;
};

// Times one layer's pass into `sum`.
template <typename Pass>
void TimeLayer(crema::Timer* timer, double* sum, const Pass& pass) {
  timer->Start();
  pass();
  timer->Stop();
  *sum += timer->MilliSeconds();
}

LayerTimes TimeLayerByLayer(crema::Net<float>& net) {
  const auto& layers = net.layers();
  LayerTimes times;
  times.forward.assign(layers.size(), 0.0);
  times.backward.assign(layers.size(), 0.0);
  crema::Timer total_timer, pass_timer, iter_timer, layer_timer;
  total_timer.Start();
  for (int j = 0; j < FLAGS_iterations; ++j) {
    iter_timer.Start();
    TimeLayer(&pass_timer, &times.forward_total, [&] {
      for (size_t i = 0; i < layers.size(); ++i) {
        TimeLayer(&layer_timer, &times.forward[i],
                  [&] { layers[i]->Forward(net.bottom_vecs()[i], net.top_vecs()[i]); });
      }
    });
    TimeLayer(&pass_timer, &times.backward_total, [&] {
      for (int i = static_cast<int>(layers.size()) - 1; i >= 0; --i) {
        TimeLayer(&layer_timer, &times.backward[i], [&] {
          layers[i]->Backward(net.top_vecs()[i], net.bottom_need_backward()[i],
                              net.bottom_vecs()[i]);
        });
      }
    });
    iter_timer.Stop();
    LOG(INFO) << "Iteration: " << j + 1 << " forward-backward time: " << iter_timer.MilliSeconds()
              << " ms.";
  }
  total_timer.Stop();
  times.total = total_timer.MilliSeconds();
  return times;
}

// The inputs `crema time` runs on. Those of several values per item (images,
// not labels) hold Gaussian noise: kernels can run faster on zeros than on
// data. The R-CNN nets' `im_info` (height, width, scale per image, as
// py-faster-rcnn feeds it) holds the first image input's height and width
// and scale 1, since their Proposal layers refuse noise there. An input
// without a shape is an error the forward pass reports.
void FillTimingInputs(crema::Net<float>* net) {
  crema::FillerParameter noise;
  noise.set_type("gaussian");
  const crema::Blob<float>* image = nullptr;
  for (crema::Blob<float>* input : net->input_blobs()) {
    if (!image && input->num_axes() == 4) image = input;
  }
  const std::vector<std::string>& names = net->blob_names();
  for (size_t i = 0; i < net->input_blobs().size(); ++i) {
    crema::Blob<float>* input = net->input_blobs()[i];
    const std::string& name = names[net->input_blob_indices()[i]];
    if (name == "im_info" && image && input->num_axes() == 2 && input->shape(1) == 3) {
      float* info = input->mutable_cpu_data();
      for (int n = 0; n < input->shape(0); ++n) {
        info[3 * n] = static_cast<float>(image->shape(2));
        info[3 * n + 1] = static_cast<float>(image->shape(3));
        info[3 * n + 2] = 1;
      }
    } else if (input->num_axes() > 0 && input->count() > input->shape(0)) {
      crema::GetFiller<float>(noise)->Fill(input);
    }
  }
}

// Times forward and backward of a net, layer by layer, in Caffe's log layout,
// then whole forward passes alone (what a deploy net costs).
// On a GPU each layer's timer waits for the layer to finish, which a training
// step does not do: there the average step ("Average Forward-Backward") is
// timed again over as many whole steps, and the per-layer figures sum to more.
int Time() {
  CREMA_REQUIRE(!FLAGS_model.empty(), "time: give the net with --model=NET.prototxt");
  CREMA_REQUIRE(FLAGS_iterations > 0, "--iterations must be positive");
  SetUpMode();
  const std::vector<std::string> stages = SplitList(FLAGS_stage);
  crema::Net<float> net(FLAGS_model, PhaseFlag(), FLAGS_level, &stages);
  FillTimingInputs(&net);

  // One untimed pass of what is timed below: allocations, first touches of
  // memory and lazy set-up (cuDNN's algorithm choice) happen here, not below;
  // the diffs' first touch (151 MB for AlexNet's fc6 weights) too.
  LOG(INFO) << "Performing Forward";
  float initial_loss = 0;
  net.Forward(&initial_loss);
  LOG(INFO) << "Initial loss: " << initial_loss;
  LOG(INFO) << "Performing Backward";
  BackwardEveryLayer(net);

  LOG(INFO) << "*** Benchmark begins ***";
  LOG(INFO) << "Testing for " << FLAGS_iterations << " iterations.";
  const LayerTimes times = TimeLayerByLayer(net);
  const double step_ms = crema::Context::mode() == crema::Context::GPU
                             ? TimeWholeSteps(net)
                             : times.total / FLAGS_iterations;
  const double forward_alone_ms = TimeForwardPasses(net);
  LOG(INFO) << "Average time per layer: ";
  for (size_t i = 0; i < net.layers().size(); ++i) {
    const std::string& name = net.layer_names()[i];
    LOG(INFO) << std::setfill(' ') << std::setw(10) << name
              << "\tforward: " << times.forward[i] / FLAGS_iterations << " ms.";
    LOG(INFO) << std::setfill(' ') << std::setw(10) << name
              << "\tbackward: " << times.backward[i] / FLAGS_iterations << " ms.";
  }
  LOG(INFO) << "Average Forward pass: " << times.forward_total / FLAGS_iterations << " ms.";
  LOG(INFO) << "Average Backward pass: " << times.backward_total / FLAGS_iterations << " ms.";
  LOG(INFO) << "Average Forward-Backward: " << step_ms << " ms.";
  LOG(INFO) << "Total Time: " << times.total << " ms.";
  LOG(INFO) << "Average Forward pass alone: " << forward_alone_ms << " ms.";
  LOG(INFO) << "*** Benchmark ends ***";
  return 0;
}
RegisterCommand register_time("time", Time);

// Signals only set a flag; the solver polls it once per iteration, so a
// signal never interrupts a half-written snapshot.
std::atomic<int> g_last_signal{0};
void HandleSignal(int signal) { g_last_signal = signal; }

crema::SolverAction EffectFlag(const std::string& name, const std::string& value) {
  if (value == "stop") return crema::SolverAction::STOP;
  if (value == "snapshot") return crema::SolverAction::SNAPSHOT;
  if (value == "none") return crema::SolverAction::NONE;
  CREMA_FAIL("--" << name << " must be stop, snapshot or none, got '" << value << "'");
}

void CopyWeights(const std::string& list, crema::Solver<float>* solver) {
  for (const std::string& file : SplitList(list)) {
    solver->net()->CopyTrainedLayersFrom(file);
    for (const auto& test_net : solver->test_nets()) test_net->CopyTrainedLayersFrom(file);
  }
}

// Trains (or fine-tunes, or resumes) the net a solver prototxt describes.
// Where a training run's metrics go: --metrics, or beside the INFO log file
// glog writes for this process, as <that file>.metrics.jsonl (glog names
// its files ...log.INFO.<date>-<time>.<pid>); none when glog writes no file.
std::string MetricsPath() {
  if (!FLAGS_metrics.empty()) return FLAGS_metrics;
  if (FLAGS_logtostderr) return "";
  const std::string pid = "." + std::to_string(getpid());
  const std::vector<std::string> dirs = FLAGS_log_dir.empty()
                                            ? google::GetLoggingDirectories()
                                            : std::vector<std::string>{FLAGS_log_dir};
  for (const std::string& dir : dirs) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      const std::string name = entry.path().filename().string();
      if (name.find(".log.INFO.") != std::string::npos && name.size() > pid.size() &&
          name.compare(name.size() - pid.size(), pid.size(), pid) == 0) {
        return entry.path().string() + ".metrics.jsonl";
      }
    }
  }
  return "";
}

int Train() {
  CREMA_REQUIRE(!FLAGS_solver.empty(), "train: give the solver with --solver=SOLVER.prototxt");
  CREMA_REQUIRE(FLAGS_weights.empty() || FLAGS_snapshot.empty(),
                "train: give --weights (start from trained weights) or --snapshot (resume), "
                "not both");
  crema::SolverParameter param;
  crema::ReadSolverParamsFromTextFile(FLAGS_solver, &param);
  const crema::SolverAction on_sigint = EffectFlag("sigint_effect", FLAGS_sigint_effect);
  const crema::SolverAction on_sighup = EffectFlag("sighup_effect", FLAGS_sighup_effect);
  // --gpu overrides the solver's mode; without it the solver's solver_mode
  // asks for a GPU only when one exists.
  if (FLAGS_gpu.empty() && param.solver_mode() == crema::SolverParameter::GPU &&
      crema::Context::DeviceCount() > 0) {
    FLAGS_gpu = std::to_string(param.device_id());
  }
  SetUpMode();
  if (!FLAGS_stage.empty() || FLAGS_level) {
    crema::NetState* state = param.mutable_train_state();
    state->set_level(FLAGS_level);
    for (const std::string& stage : SplitList(FLAGS_stage)) state->add_stage(stage);
  }
  const std::vector<int> gpus = GpuIds();
  crema::RequireRunnableThreads(FLAGS_solver_count, "--solver_count");
  CREMA_REQUIRE(gpus.size() <= 1 || FLAGS_solver_count == 1,
                "--gpu lists " << gpus.size()
                               << " GPUs: that is one solver per GPU; "
                                  "leave --solver_count out");
  const int local_solvers = gpus.size() > 1 ? static_cast<int>(gpus.size()) : FLAGS_solver_count;
  std::signal(SIGINT, HandleSignal);
  std::signal(SIGHUP, HandleSignal);
  auto poll_signals = [on_sigint, on_sighup] {
    const int signal = g_last_signal.exchange(0);
    if (signal == SIGINT) return on_sigint;
    if (signal == SIGHUP) return on_sighup;
    return crema::SolverAction::NONE;
  };
  LOG(INFO) << "Starting Optimization";
  const std::string metrics = MetricsPath();  // after a line is logged: glog's file exists
  if (local_solvers == 1 && crema::ProcessCount() == 1) {
    auto solver = crema::CreateSolver<float>(param);
    solver->set_metrics_file(metrics);
    solver->SetActionFunction(poll_signals);
    if (!FLAGS_weights.empty()) CopyWeights(FLAGS_weights, solver.get());
    solver->Solve(FLAGS_snapshot);
    return 0;
  }
  crema::ParallelTrainer<float> trainer(param, local_solvers,
                                        gpus.size() > 1 ? gpus : std::vector<int>());
  trainer.SetActionFunction(poll_signals);
  trainer.main_solver()->set_metrics_file(metrics);
  if (!FLAGS_weights.empty()) CopyWeights(FLAGS_weights, trainer.main_solver());
  trainer.Run(FLAGS_snapshot);
  return 0;
}
RegisterCommand register_train("train", Train);

// The class names of --labels, one per class of the scored blobs; without
// it, none (the report prints indices).
std::vector<std::string> ClassNames(int classes) {
  if (FLAGS_labels.empty()) return {};
  std::vector<std::string> names = crema::ReadLines(FLAGS_labels, "--labels");
  CREMA_REQUIRE(static_cast<int>(names.size()) == classes,
                "--labels " << FLAGS_labels << ": " << names.size()
                            << " names, but the net's scores have " << classes << " classes");
  return names;
}

// Scores a trained model: the mean of each net output over --iterations
// batches; with --labels or --confusion, also the classifier's per-class
// accuracy, top-1 and top-k, and its confusion matrix (crema/evaluation.hpp).
int Test() {
  CREMA_REQUIRE(!FLAGS_model.empty(), "test: give the net with --model=NET.prototxt");
  CREMA_REQUIRE(!FLAGS_weights.empty(), "test: give the trained weights with --weights=W");
  CREMA_REQUIRE(FLAGS_iterations > 0, "--iterations must be positive");
  SetUpMode();
  const std::vector<std::string> stages = SplitList(FLAGS_stage);
  crema::Net<float> net(FLAGS_model, crema::TEST, FLAGS_level, &stages);
  for (const std::string& file : SplitList(FLAGS_weights)) net.CopyTrainedLayersFrom(file);
  LOG(INFO) << "Running for " << FLAGS_iterations << " iterations.";
  // A detection net's DetectionEvaluate rows are scored as mAP, per class,
  // by VOC2007's 11 points and by the area under the curve (both ways).
  crema::OutputMeans<float> means({"11point", "MaxIntegral", "Integral"}, true);
  const bool evaluates = !FLAGS_labels.empty() || !FLAGS_confusion.empty();
  CREMA_REQUIRE(FLAGS_top_k > 0, "--top_k must be positive, got " << FLAGS_top_k);
  crema::ScoredBlobs<float> scored;
  std::unique_ptr<crema::ConfusionMatrix> matrix;
  std::vector<std::string> names;
  if (evaluates) {
    scored = crema::FindScoredBlobs(net);
    const int classes = scored.scores->shape(scored.axis);
    names = ClassNames(classes);
    matrix.reset(new crema::ConfusionMatrix(classes, FLAGS_top_k));
  }
  float loss = 0;
  for (int i = 0; i < FLAGS_iterations; ++i) {
    float iter_loss;
    net.Forward(&iter_loss);
    loss += iter_loss;
    means.Add(net);
    if (matrix) matrix->Add(scored);
    crema::ReportOutputs(net, crema::OutputValues(net), "", [i](const std::string& line) {
      LOG(INFO) << "Batch " << i << ", " << line;
    });
  }
  net.Finish();
  LOG(INFO) << "Loss: " << loss / FLAGS_iterations;
  means.Report(net, "", crema::LogInfoSink());
  if (matrix) {
    for (const std::string& line : matrix->ReportLines(names)) LOG(INFO) << line;
  }
  if (!FLAGS_confusion.empty()) {
    crema::WriteConfusionPng(*matrix, names, FLAGS_confusion);
    LOG(INFO) << "Wrote the confusion matrix to " << FLAGS_confusion;
  }
  return 0;
}
RegisterCommand register_test("test", Test);

// Top classes of images through a deploy net (tools/classify.cpp).
RegisterCommand register_classify("classify", [] {
  SetUpMode();
  return Classify();
});

// SSD detections in images through a deploy net (tools/detect.cpp).
RegisterCommand register_detect("detect", [] {
  SetUpMode();
  return Detect();
});

// Writes a deploy net and its trained weights as an ONNX model.
int Export() {
  CREMA_REQUIRE(!FLAGS_model.empty(), "export: give the deploy net with --model=DEPLOY.prototxt");
  CREMA_REQUIRE(!FLAGS_weights.empty(), "export: give the trained weights with --weights=W");
  CREMA_REQUIRE(!FLAGS_output.empty(), "export: give the ONNX file to write with --output=X.onnx");
  crema::OnnxExportOptions options;
  options.opset = FLAGS_opset;
  crema::ExportOnnx(FLAGS_model, FLAGS_weights, FLAGS_output, options);
  LOG(INFO) << "Wrote " << FLAGS_output << " (ONNX opset " << FLAGS_opset << ")";
  return 0;
}
RegisterCommand register_export("export", Export);

std::string Usage() {
  std::string usage =
      "command line brew\n"
      "usage: crema <command> <args>\n\n"
      "commands:\n";
  for (const auto& entry : Commands()) usage += "  " + entry.first + "\n";
  return usage;
}

}  // namespace

// oneDNN runs on OpenMP, whose runtime reads its wait policy once, when it
// loads, before main. Unless the user chose a policy, the tool picks one for
// the command and, where that is not the default, starts itself again with it
// (on failure it runs on as it is):
//  - training (`train`, `time` of a TRAIN-phase net) waits passively: spinning
//    OpenMP threads would take the cores from Crema's kernel pool, which runs
//    the layers between oneDNN's;
//  - every other command keeps the default (threads spin a while after each
//    primitive): a deploy net's folded layers are oneDNN primitives back to
//    back, and waking sleeping threads before each one slows its pass.
bool TrainsNets(const std::string& command) {
  return command == "train" || (command == "time" && FLAGS_phase == "TRAIN");
}

void ChooseOpenMpWaitPolicy(const std::string& command, std::vector<std::string> args) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && TrainsNets(command)) {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv.data());
    unsetenv("OMP_WAIT_POLICY");  // execv failed: run on under the default
  }
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  LOG(INFO) << "OpenMP wait policy: " << (policy != nullptr ? policy : "the runtime's default");
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);  // before GlobalInit takes the flags out
  FLAGS_alsologtostderr = 1;
  gflags::SetVersionString(CREMA_VERSION_STRING);
  gflags::SetUsageMessage(Usage());
  crema::GlobalInit(&argc, &argv);
#ifdef CREMA_PYTHON_LAYER
  crema::python::RegisterPythonLayer();  // type: "Python" layers (the interpreter starts on use)
#endif
  const bool asked_for_help = argc == 1 || (argc == 2 && std::string(argv[1]) == "help");
  if (argc != 2 || Commands().count(argv[1]) == 0) {
    std::fprintf(stderr, "%s\n", Usage().c_str());
    gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/");  // crema.cpp, classify.cpp, detect.cpp
    return asked_for_help ? 0 : 1;
  }
  ChooseOpenMpWaitPolicy(argv[1], args);
  // Under mpirun, the first process speaks for all (the others warn only).
  if (crema::ProcessRank() > 0) FLAGS_minloglevel = std::max(FLAGS_minloglevel, 1);
  int status = 0;
  try {
    status = Commands()[argv[1]]();
  } catch (const crema::Error& error) {
    LOG(ERROR) << error.what();
    crema::AbortProcesses(1);  // the other processes would wait for this one
    return 1;
  }
  crema::FinalizeProcesses();
  return status;
}
