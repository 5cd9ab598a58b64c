// Kernels compiled for a CPU feature the build does not target, whatever
// -march says, and the question each caller asks first. The rule: a function
// marked CREMA_AVX512 (or CREMA_AVX512_BF16) runs only where HasAvx512()
// (and, for bf16, DnnlHasBf16) is true; elsewhere its plain twin runs.
// x86-64 with GCC or Clang only: include it where the intrinsics are.
#ifndef CREMA_UTIL_CPU_FEATURES_HPP_
#define CREMA_UTIL_CPU_FEATURES_HPP_

#define CREMA_AVX512 __attribute__((target("avx512f")))
#define CREMA_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))

namespace crema {

// Whether this CPU runs AVX-512 Foundation instructions.
inline bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

}  // namespace crema

#endif  // CREMA_UTIL_CPU_FEATURES_HPP_
