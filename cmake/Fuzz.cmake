# CREMA_FUZZ=ON builds the libFuzzer harnesses of tests/fuzz/ (clang only).
# The library gets libFuzzer's coverage instrumentation (the harnesses steer
# by it); the harnesses link libFuzzer's driver. Meant with
# CREMA_SANITIZE=address, so that every run is also checked by ASan + UBSan.
option(CREMA_FUZZ "Build the libFuzzer harnesses (tests/fuzz; needs clang)" OFF)
if(CREMA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "CREMA_FUZZ=ON needs clang (libFuzzer is part of clang): configure with "
                        "CC=clang CXX=clang++ (apt-get install clang libclang-rt-14-dev)")
  endif()
  target_compile_options(crema PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()
