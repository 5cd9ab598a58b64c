// The per-thread runtime (Context), user-facing errors, and the macros every
// unit of Crema uses.
#ifndef CREMA_COMMON_HPP_
#define CREMA_COMMON_HPP_

#include <glog/logging.h>

#include <boost/random/mersenne_twister.hpp>
#include <cstdint>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "crema/util/device_alternate.hpp"

// Forbids copying a class: the members it owns (threads, buffers, generators)
// must not be duplicated behind its back.
#define DISABLE_COPY_AND_ASSIGN(classname) \
  classname(const classname&) = delete;    \
  classname& operator=(const classname&) = delete

// Explicit instantiation for the two element types every numeric unit supports.
#define INSTANTIATE_CLASS(classname) \
  template class classname<float>;   \
  template class classname<double>

namespace crema {

// A failure caused by the user's input (a prototxt, a flag, a file, a shape).
// It carries one readable message; the tools print it and exit with status 1.
// Programming errors stay CHECKs.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Memory that cannot be had: the host or a GPU is exhausted, or a blob is
// larger than the thread's allocation limit (Context::set_max_allocation).
// The net adds the layer that asked; the user's fix is a smaller batch or shape.
class MemoryError : public Error {
 public:
  explicit MemoryError(const std::string& message) : Error(message) {}
};

// Builds an Error's message with stream syntax:
//   CREMA_REQUIRE(stride > 0, "layer " << name << ": stride must be positive");
#define CREMA_REQUIRE(condition, message)     \
  do {                                        \
    if (!(condition)) {                       \
      std::ostringstream crema_require_os_;   \
      crema_require_os_ << message;           \
      throw ::crema::Error(crema_require_os_.str()); \
    }                                         \
  } while (0)

#define CREMA_FAIL(message) CREMA_REQUIRE(false, message)

// Runs `body`; an Error it throws is rethrown, of the same kind, with
// "origin: " in front, so that an error found deep inside (a layer's) also
// names the file it came from. A message that already starts with it is kept.
template <typename Body>
void WithOrigin(const std::string& origin, Body&& body) {
  try {
    body();
  } catch (const Error& error) {
    const std::string message = error.what();
    if (message.rfind(origin, 0) == 0) throw;
    if (dynamic_cast<const MemoryError*>(&error)) throw MemoryError(origin + ": " + message);
    throw Error(origin + ": " + message);
  }
}

// A thread's random generator. It owns its Mersenne twister through a pointer
// and cannot be copied: a copied twister silently replays the same stream.
class RNG {
 public:
  using Generator = boost::mt19937;
  RNG();
  explicit RNG(uint64_t seed);
  Generator& generator() { return *generator_; }
  uint32_t operator()() { return (*generator_)(); }
  void Seed(uint64_t seed);
  // The generator's state as text (boost's stream format), to save and restore.
  std::string State() const;
  void SetState(const std::string& state);

 private:
  std::unique_ptr<Generator> generator_;
  DISABLE_COPY_AND_ASSIGN(RNG);
};

// A seed from the operating system's entropy pool (falls back to time and pid).
uint64_t cluster_seedgen();

// The runtime state of one thread: mode, device, solver placement and the
// thread's random generators. Each thread owns one instance, created on first
// use; the static accessors read and write the calling thread's instance only.
class Context {
 public:
  enum Mode { CPU, GPU };

  ~Context();
  static Context& Get();

  static Mode mode() { return Get().mode_; }
  // GPU mode needs a device; asking for it on a machine without one is a user
  // error (Error), so tools can report it cleanly.
  static void set_mode(Mode mode);

  static int device() { return Get().device_; }
  // Selects the device for this thread; recreates the cuBLAS handle and cuRAND
  // generator on the new device (lazily, when first used).
  static void SetDevice(int device_id);

  // Reseeds this thread's CPU generator and, in CUDA builds, its cuRAND one.
  static void set_random_seed(uint64_t seed);
  static RNG& rng() { return Get().rng_; }
  static uint64_t random_seed() { return Get().seed_; }

  // The largest single allocation (bytes) this thread's blobs may make; a
  // larger one is a MemoryError instead of an allocation that would exhaust
  // the machine. Unlimited by default; threads a worker starts inherit it.
  static size_t max_allocation() { return Get().max_allocation_; }
  static void set_max_allocation(size_t bytes) { Get().max_allocation_ = bytes; }

  static int solver_count() { return Get().solver_count_; }
  static void set_solver_count(int count) { Get().solver_count_ = count; }
  static int solver_rank() { return Get().solver_rank_; }
  static void set_solver_rank(int rank) { Get().solver_rank_ = rank; }
  // Rank 0 of a data-parallel run (or the only solver): the one that tests,
  // snapshots and logs for all of them.
  static bool is_rank_zero() { return Get().solver_rank_ == 0; }
  // Solvers of this process (solver_count() counts those of every process);
  // this process runs ranks [solver_rank() / local * local, ... + local).
  static int local_solver_count() { return Get().local_solver_count_; }
  static void set_local_solver_count(int count) { Get().local_solver_count_ = count; }
  static bool multiprocess() { return Get().multiprocess_; }
  static void set_multiprocess(bool multiprocess) { Get().multiprocess_ = multiprocess; }

  // Number of usable CUDA devices; 0 in CPU-only builds and wherever the
  // driver or the device is missing (that is not an error).
  static int DeviceCount();
  // Logs the properties of this thread's device.
  static void DeviceQuery();
  // True when the device can be selected and used.
  static bool CheckDevice(int device_id);
  // The first usable device at or after start_id, or -1.
  static int FindDevice(int start_id = 0);

#ifdef CREMA_CUDA
  static cublasHandle_t cublas_handle();
  static curandGenerator_t curand_generator();
#endif

 private:
  Context();
  void ReleaseGpuHandles();

  Mode mode_ = CPU;
  int device_ = 0;
  int solver_count_ = 1;
  int solver_rank_ = 0;
  int local_solver_count_ = 1;
  bool multiprocess_ = false;
  size_t max_allocation_ = SIZE_MAX;
  uint64_t seed_ = 0;
  RNG rng_;
#ifdef CREMA_CUDA
  cublasHandle_t cublas_handle_ = nullptr;
  curandGenerator_t curand_generator_ = nullptr;
  int handles_device_ = -1;
#endif
  DISABLE_COPY_AND_ASSIGN(Context);
};

// Parses the flags and initialises logging for a tool or test binary.
void GlobalInit(int* argc, char*** argv);

}  // namespace crema

#endif  // CREMA_COMMON_HPP_
