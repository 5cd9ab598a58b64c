#include "crema/util/dnnl.hpp"

#ifdef CREMA_DNNL

#include <omp.h>

#include <memory>

#include "crema/util/thread_pool.hpp"

namespace crema {

dnnl::engine& DnnlEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void DnnlUseThreadBudget() { omp_set_num_threads(ThreadBudget()); }

dnnl::stream& DnnlStream() {
  thread_local std::unique_ptr<dnnl::stream> stream;
  if (!stream) stream.reset(new dnnl::stream(DnnlEngine()));
  DnnlUseThreadBudget();
  return *stream;
}

void DnnlRun(const dnnl::primitive& primitive, const std::unordered_map<int, dnnl::memory>& args) {
  dnnl::stream& stream = DnnlStream();
  primitive.execute(stream, args);
  stream.wait();
}

}  // namespace crema

#endif  // CREMA_DNNL
