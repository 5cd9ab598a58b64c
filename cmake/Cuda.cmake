# CREMA_CUDA: AUTO builds the CUDA backend where it can run: nvcc is found
# (PATH or /usr/local/cuda) and a CUDA device answers (nvidia-smi lists one).
# ON builds it whenever nvcc is found (CI compiles every .cu file on machines
# without a GPU); OFF never touches CUDA. With it the build defines the
# macro CREMA_CUDA; without it no CUDA header is included anywhere.
#
# CREMA_CUDA_ARCH: the architectures .cu files are compiled for. Empty (the
# default) means those of the devices that answer, or 90 where none does.

# The compute capabilities ("86", "90") of the devices nvidia-smi lists, in
# out_var; empty where there is no nvidia-smi, no driver or no device.
function(crema_detect_cuda_devices out_var)
  set(${out_var} "" PARENT_SCOPE)
  find_program(CREMA_NVIDIA_SMI nvidia-smi)
  if(NOT CREMA_NVIDIA_SMI)
    return()
  endif()
  execute_process(
    COMMAND ${CREMA_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
    OUTPUT_VARIABLE listing
    RESULT_VARIABLE status
    ERROR_QUIET TIMEOUT 30)
  if(NOT status EQUAL 0)
    return()
  endif()
  string(REGEX MATCHALL "[0-9]+\\.[0-9]+" capabilities "${listing}")
  set(architectures "")
  foreach(capability ${capabilities})
    string(REPLACE "." "" architecture ${capability})
    list(APPEND architectures ${architecture})
  endforeach()
  list(REMOVE_DUPLICATES architectures)
  set(${out_var} "${architectures}" PARENT_SCOPE)
endfunction()

set(CREMA_WITH_CUDA OFF)
if(NOT CREMA_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(CREMA_NVCC nvcc PATHS /usr/local/cuda/bin)
    if(CREMA_NVCC)
      set(CMAKE_CUDA_COMPILER ${CREMA_NVCC})
    endif()
  endif()
  crema_detect_cuda_devices(CREMA_CUDA_DEVICE_ARCHS)
  if(NOT CMAKE_CUDA_COMPILER)
    if(CREMA_CUDA STREQUAL "ON")
      message(FATAL_ERROR "CREMA_CUDA=ON but nvcc was not found (PATH, /usr/local/cuda/bin)")
    endif()
    message(STATUS "Crema: CUDA backend off: nvcc not found")
  elseif(CREMA_CUDA STREQUAL "AUTO" AND NOT CREMA_CUDA_DEVICE_ARCHS)
    message(STATUS "Crema: CUDA backend off: nvcc is here but no CUDA device answers "
                   "(nvidia-smi); -DCREMA_CUDA=ON compiles it anyway")
  else()
    if(NOT CREMA_CUDA_ARCH STREQUAL "")
      set(CREMA_CUDA_ARCHITECTURES ${CREMA_CUDA_ARCH})
    elseif(CREMA_CUDA_DEVICE_ARCHS)
      set(CREMA_CUDA_ARCHITECTURES ${CREMA_CUDA_DEVICE_ARCHS})
    else()
      set(CREMA_CUDA_ARCHITECTURES 90)
      message(STATUS "Crema: no CUDA device answers: compiling for architecture 90; "
                     "set -DCREMA_CUDA_ARCH=<yours> for another GPU")
    endif()
    message(STATUS "Crema: CUDA backend on, compiled for architecture(s) "
                   "${CREMA_CUDA_ARCHITECTURES}")
    set(CMAKE_CUDA_ARCHITECTURES ${CREMA_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CREMA_WITH_CUDA ON)
  endif()
endif()

function(crema_cuda_target target)
  if(CREMA_WITH_CUDA)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${CREMA_CUDA_ARCHITECTURES}"
                                               CUDA_STANDARD 17)
  endif()
endfunction()

# The .cu sources in batches of `size`, each batch a generated .cu file that
# includes its sources: CMake before 3.31 has no unity build for CUDA, and
# most of a .cu file's compile time is nvcc parsing the same headers.
function(crema_cuda_unity_batches out_var size)
  set(sources ${ARGN})
  list(SORT sources)
  set(batches "")
  set(content "")
  set(in_batch 0)
  list(LENGTH sources remaining)
  foreach(source ${sources})
    string(APPEND content "#include \"${source}\"\n")
    math(EXPR in_batch "${in_batch} + 1")
    math(EXPR remaining "${remaining} - 1")
    if(in_batch EQUAL size OR remaining EQUAL 0)
      list(LENGTH batches index)
      set(batch ${CMAKE_BINARY_DIR}/cuda_unity/unity_${index}.cu)
      file(CONFIGURE OUTPUT ${batch} CONTENT "${content}" @ONLY)  # rewritten only when it changes
      list(APPEND batches ${batch})
      set(content "")
      set(in_batch 0)
    endif()
  endforeach()
  set(${out_var} ${batches} PARENT_SCOPE)
endfunction()
