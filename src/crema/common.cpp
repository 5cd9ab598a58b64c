#include "crema/common.hpp"

#include <gflags/gflags.h>
#include <unistd.h>

#include <boost/thread/tss.hpp>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <random>

namespace crema {

// ---- RNG -----------------------------------------------------------------------

RNG::RNG() : generator_(new Generator()) { Seed(cluster_seedgen()); }

RNG::RNG(uint64_t seed) : generator_(new Generator()) { Seed(seed); }

// A seed that fits in 32 bits seeds the twister as Caffe does (so a
// random_seed gives Caffe's stream); a wider one (a child thread's, drawn
// from 64 bits) keeps both halves through a seed sequence instead of losing
// the high one.
void RNG::Seed(uint64_t seed) {
  if (seed <= UINT32_MAX) {
    generator_->seed(static_cast<uint32_t>(seed));
    return;
  }
  std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  generator_->seed(sequence);
}

std::string RNG::State() const {
  std::ostringstream os;
  os << *generator_;
  return os.str();
}

void RNG::SetState(const std::string& state) {
  // boost's reader flags failure even on a good state, so validate first:
  // a twister's state is exactly state_size unsigned numbers.
  std::istringstream tokens(state);
  std::string token;
  size_t count = 0;
  while (tokens >> token) {
    CREMA_REQUIRE(token.find_first_not_of("0123456789") == std::string::npos,
                  "corrupt random generator state: '" << token.substr(0, 20) << "' is not a number");
    ++count;
  }
  CREMA_REQUIRE(count == Generator::state_size, "corrupt random generator state: "
                                                    << count << " numbers, expected "
                                                    << Generator::state_size);
  std::istringstream is(state);
  is >> *generator_;
}

uint64_t cluster_seedgen() {
  uint64_t seed = 0;
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    const size_t got = std::fread(&seed, 1, sizeof(seed), f);
    std::fclose(f);
    if (got == sizeof(seed)) return seed;
  }
  // No entropy pool: mix the time and the process id, as a fallback only.
  const uint64_t s = static_cast<uint64_t>(std::time(nullptr));
  return ((s * 181) * ((static_cast<uint64_t>(getpid()) - 83) * 359)) % 104729;
}

// ---- Context -------------------------------------------------------------------

namespace {
// Each thread's Context, destroyed when the thread exits.
boost::thread_specific_ptr<Context>& ThreadContext() {
  static boost::thread_specific_ptr<Context> context;
  return context;
}
}  // namespace

Context::Context() : seed_(cluster_seedgen()), rng_(seed_) {}

Context& Context::Get() {
  auto& context = ThreadContext();
  if (!context.get()) context.reset(new Context());
  return *context;
}

void Context::set_random_seed(uint64_t seed) {
  Context& context = Get();
  context.seed_ = seed;
  context.rng_.Seed(seed);
#ifdef CREMA_CUDA
  if (context.curand_generator_) {
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(context.curand_generator_, seed));
    CURAND_CHECK(curandSetGeneratorOffset(context.curand_generator_, 0));
  }
#endif
}

void GlobalInit(int* argc, char*** argv) {
  gflags::ParseCommandLineFlags(argc, argv, true);
  google::InitGoogleLogging(*(argv)[0]);
  google::InstallFailureSignalHandler();
}

#ifndef CREMA_CUDA

Context::~Context() {}

void Context::ReleaseGpuHandles() {}

void Context::set_mode(Mode mode) {
  CREMA_REQUIRE(mode == CPU, "GPU mode was asked for, but this is a CPU-only build of Crema "
                             "(rebuild with CREMA_CUDA=ON on a machine with the CUDA toolkit)");
  Get().mode_ = mode;
}

void Context::SetDevice(int device_id) {
  CREMA_REQUIRE(device_id == 0, "device " << device_id << " asked for in a CPU-only build");
  Get().device_ = device_id;
}

int Context::DeviceCount() { return 0; }

void Context::DeviceQuery() { LOG(INFO) << "CPU-only build: no CUDA devices"; }

bool Context::CheckDevice(int) { return false; }

int Context::FindDevice(int) { return -1; }

#else  // CUDA build

Context::~Context() { ReleaseGpuHandles(); }

void Context::ReleaseGpuHandles() {
  if (cublas_handle_) cublasDestroy(cublas_handle_);
  if (curand_generator_) curandDestroyGenerator(curand_generator_);
  cublas_handle_ = nullptr;
  curand_generator_ = nullptr;
  handles_device_ = -1;
}

int Context::DeviceCount() {
  // Asked once per process: without a driver (or with one too old for this
  // runtime) the answer is "no device", which is not an error.
  static int count = -1;
  static std::once_flag once;
  std::call_once(once, [] {
    int n = 0;
    const cudaError_t status = cudaGetDeviceCount(&n);
    if (status != cudaSuccess) {
      VLOG(1) << "No CUDA device: " << cudaGetErrorString(status);
      cudaGetLastError();  // clear the sticky error so later calls start clean
      n = 0;
    }
    count = n;
  });
  return count;
}

void Context::set_mode(Mode mode) {
  if (mode == GPU) {
    CREMA_REQUIRE(DeviceCount() > 0, "GPU mode was asked for, but no CUDA device is usable on "
                                     "this machine");
    CUDA_CHECK(cudaSetDevice(Get().device_));
  }
  Get().mode_ = mode;
}

void Context::SetDevice(int device_id) {
  const int count = DeviceCount();
  CREMA_REQUIRE(device_id >= 0 && device_id < count,
                "device " << device_id << " asked for, but this machine has " << count
                          << " CUDA device(s)");
  Context& context = Get();
  CUDA_CHECK(cudaSetDevice(device_id));
  if (context.handles_device_ != device_id) context.ReleaseGpuHandles();
  context.device_ = device_id;
}

cublasHandle_t Context::cublas_handle() {
  Context& context = Get();
  if (context.handles_device_ != context.device_) context.ReleaseGpuHandles();
  if (!context.cublas_handle_) {
    CUDA_CHECK(cudaSetDevice(context.device_));
    CUBLAS_CHECK(cublasCreate(&context.cublas_handle_));
    context.handles_device_ = context.device_;
  }
  return context.cublas_handle_;
}

curandGenerator_t Context::curand_generator() {
  Context& context = Get();
  if (context.handles_device_ != context.device_) context.ReleaseGpuHandles();
  if (!context.curand_generator_) {
    CUDA_CHECK(cudaSetDevice(context.device_));
    CURAND_CHECK(curandCreateGenerator(&context.curand_generator_, CURAND_RNG_PSEUDO_DEFAULT));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(context.curand_generator_, context.seed_));
    context.handles_device_ = context.device_;
  }
  return context.curand_generator_;
}

void Context::DeviceQuery() {
  if (DeviceCount() == 0) {
    LOG(INFO) << "No CUDA device found";
    return;
  }
  cudaDeviceProp prop;
  int device;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  LOG(INFO) << "Device id:                     " << device;
  LOG(INFO) << "Name:                          " << prop.name;
  LOG(INFO) << "Major revision number:         " << prop.major;
  LOG(INFO) << "Minor revision number:         " << prop.minor;
  LOG(INFO) << "Total global memory:           " << prop.totalGlobalMem;
  LOG(INFO) << "Total shared memory per block: " << prop.sharedMemPerBlock;
  LOG(INFO) << "Total registers per block:     " << prop.regsPerBlock;
  LOG(INFO) << "Warp size:                     " << prop.warpSize;
  LOG(INFO) << "Maximum threads per block:     " << prop.maxThreadsPerBlock;
  LOG(INFO) << "Number of multiprocessors:     " << prop.multiProcessorCount;
}

bool Context::CheckDevice(int device_id) {
  if (device_id < 0 || device_id >= DeviceCount()) return false;
  // A device in exclusive mode held by another process refuses a context:
  // touching it with a no-op free tells.
  const bool usable = cudaSetDevice(device_id) == cudaSuccess && cudaFree(0) == cudaSuccess;
  cudaGetLastError();
  return usable;
}

int Context::FindDevice(int start_id) {
  for (int i = start_id; i < DeviceCount(); ++i) {
    if (CheckDevice(i)) return i;
  }
  return -1;
}

const char* cublasGetErrorString(cublasStatus_t status) {
  return ::cublasGetStatusString(status);
}

const char* curandGetErrorString(curandStatus_t status) {
  switch (status) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
      return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
    default: return "unknown cuRAND status";
  }
}

#endif  // !CREMA_CUDA

}  // namespace crema
