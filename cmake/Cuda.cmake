# CREMA_CUDA: AUTO builds the CUDA backend when nvcc is found (PATH or
# /usr/local/cuda), ON requires it, OFF never touches CUDA. Without it the
# build defines CPU_ONLY and no CUDA header is included anywhere.
set(CREMA_WITH_CUDA OFF)
if(NOT CREMA_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(CREMA_NVCC nvcc PATHS /usr/local/cuda/bin)
    if(CREMA_NVCC)
      set(CMAKE_CUDA_COMPILER ${CREMA_NVCC})
    endif()
  endif()
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${CREMA_CUDA_ARCH})
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CREMA_WITH_CUDA ON)
  elseif(CREMA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "CREMA_CUDA=ON but nvcc was not found")
  endif()
endif()

function(crema_cuda_target target)
  if(CREMA_WITH_CUDA)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${CREMA_CUDA_ARCH}"
                                               CUDA_STANDARD 17)
  endif()
endfunction()
