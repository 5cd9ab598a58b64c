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

dnnl::stream& DnnlStream() {
  thread_local std::unique_ptr<dnnl::stream> stream;
  if (!stream) stream.reset(new dnnl::stream(DnnlEngine()));
  omp_set_num_threads(ThreadBudget());
  return *stream;
}

}  // namespace crema

#endif  // CREMA_DNNL
