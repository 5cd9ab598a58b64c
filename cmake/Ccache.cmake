# Compile through ccache when it is installed: rebuilds of unchanged sources
# (CI, the sanitizer builds, a fresh build directory) come from the cache.
# CCACHE_BASEDIR makes paths relative to the checkout, so build trees at the
# same depth (build/cpu, build/release) share cache entries.
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CREMA_CCACHE_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
                            ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CREMA_CCACHE_LAUNCHER})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CREMA_CCACHE_LAUNCHER})
endif()
