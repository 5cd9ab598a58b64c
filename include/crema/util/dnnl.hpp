// The oneDNN engine's shared pieces (CREMA_DNNL builds only): the CPU engine,
// a stream per thread, plain (Caffe-layout) memory descriptors, and the
// thread count of the calling thread's primitives, taken from the one CPU
// thread budget (oneDNN runs on OpenMP, whose thread count is per thread).
#ifndef CREMA_UTIL_DNNL_HPP_
#define CREMA_UTIL_DNNL_HPP_

#ifdef CREMA_DNNL

#include <dnnl.hpp>
#include <vector>

namespace crema {

dnnl::engine& DnnlEngine();
// The calling thread's stream; also sets the thread's OpenMP thread count to
// the thread budget, so primitives never oversubscribe the cores.
dnnl::stream& DnnlStream();

// f32 memory in Caffe's dense layout (nchw for 4 axes, oihw-like for weights).
inline dnnl::memory::desc PlainDesc(const std::vector<int>& shape) {
  dnnl::memory::dims dims(shape.begin(), shape.end());
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// Wraps memory the caller owns (a blob's data or diff); no copy.
inline dnnl::memory Wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, DnnlEngine(), const_cast<void*>(data));
}

}  // namespace crema

#endif  // CREMA_DNNL
#endif  // CREMA_UTIL_DNNL_HPP_
