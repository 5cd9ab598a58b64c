# Every dependency comes from a Debian package (scripts/install_deps.sh).
find_package(Threads REQUIRED)
find_package(Boost 1.70 REQUIRED COMPONENTS thread system filesystem chrono)
find_package(glog REQUIRED)
find_package(gflags REQUIRED)
find_package(Protobuf REQUIRED)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(ZLIB REQUIRED)

find_path(CBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas
        /usr/include/aarch64-linux-gnu/openblas-pthread
  NO_DEFAULT_PATH)
find_path(CBLAS_INCLUDE_DIR cblas.h)
find_library(OPENBLAS_LIBRARY NAMES openblas)
if(NOT CBLAS_INCLUDE_DIR OR NOT OPENBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS not found: run scripts/install_deps.sh")
endif()

find_library(LMDB_LIBRARY NAMES lmdb)
find_library(LEVELDB_LIBRARY NAMES leveldb)
if(NOT LMDB_LIBRARY OR NOT LEVELDB_LIBRARY)
  message(FATAL_ERROR "LMDB or LevelDB not found: run scripts/install_deps.sh")
endif()

set(CREMA_DEPENDENCY_LIBS
  Boost::thread Boost::system Boost::filesystem Boost::chrono glog::glog gflags
  protobuf::libprotobuf ${OPENBLAS_LIBRARY} ${HDF5_C_LIBRARIES} ${LMDB_LIBRARY}
  ${LEVELDB_LIBRARY} ZLIB::ZLIB Threads::Threads)
set(CREMA_DEFINITIONS "")
include_directories(SYSTEM ${CBLAS_INCLUDE_DIR} ${HDF5_INCLUDE_DIRS})

# CREMA_CUDA (the macro, as CREMA_DNNL, CREMA_MPI...): the build has the CUDA
# backend; without it no CUDA header is included anywhere.
if(CREMA_WITH_CUDA)
  list(APPEND CREMA_DEPENDENCY_LIBS CUDA::cudart CUDA::cublas CUDA::curand)
  list(APPEND CREMA_DEFINITIONS CREMA_CUDA)
endif()

# CREMA_MPI: AUTO builds the multi-process path when Open MPI is installed
# (libopenmpi-dev), ON requires it, OFF leaves it out. The binaries then also
# run as one process outside mpirun.
set(CREMA_WITH_MPI OFF)
if(NOT CREMA_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    list(APPEND CREMA_DEPENDENCY_LIBS MPI::MPI_CXX)
    list(APPEND CREMA_DEFINITIONS CREMA_MPI)
    set(CREMA_WITH_MPI ON)
  elseif(CREMA_MPI STREQUAL "ON")
    message(FATAL_ERROR "CREMA_MPI=ON but MPI was not found (apt-get install libopenmpi-dev)")
  endif()
endif()

set(CREMA_WITH_NCCL OFF)
# NCCL (beside the CUDA toolkit) averages gradients between GPUs; without it
# a multi-GPU run averages them through host memory.
if(CREMA_WITH_CUDA)
  find_path(CREMA_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(CREMA_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(CREMA_NCCL_INCLUDE AND CREMA_NCCL_LIBRARY)
    list(APPEND CREMA_DEPENDENCY_LIBS ${CREMA_NCCL_LIBRARY})
    list(APPEND CREMA_DEFINITIONS CREMA_NCCL)
    set(CREMA_WITH_NCCL ON)
  endif()
endif()

# CREMA_CUDNN: in CUDA builds, AUTO builds the cuDNN engine (src/crema/cudnn/:
# Convolution, Pooling, ReLU, Sigmoid, TanH, Softmax, LRN and BatchNorm on
# cuDNN, chosen by engine DEFAULT and CUDNN in GPU mode) when cuDNN 9's header
# and library are found beside the CUDA toolkit, ON requires them, OFF leaves
# it out (every layer then runs its CUDA body on the GPU). The layers use
# cuDNN's descriptor API, which cuDNN 9 still has and other majors may not.
set(CREMA_WITH_CUDNN OFF)
if(CREMA_WITH_CUDA AND NOT CREMA_CUDNN STREQUAL "OFF")
  find_path(CREMA_CUDNN_INCLUDE cudnn_version.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(CREMA_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  set(cudnn_problem "")
  if(NOT CREMA_CUDNN_INCLUDE OR NOT CREMA_CUDNN_LIBRARY)
    set(cudnn_problem "cuDNN was not found (cudnn_version.h and libcudnn beside the CUDA toolkit)")
  else()
    file(STRINGS ${CREMA_CUDNN_INCLUDE}/cudnn_version.h cudnn_major_line
         REGEX "#define[ \t]+CUDNN_MAJOR[ \t]+[0-9]+")
    string(REGEX MATCH "[0-9]+$" CREMA_CUDNN_MAJOR "${cudnn_major_line}")
    if(NOT CREMA_CUDNN_MAJOR STREQUAL "9")
      set(cudnn_problem "${CREMA_CUDNN_INCLUDE} holds cuDNN '${CREMA_CUDNN_MAJOR}'; the cuDNN engine is written for cuDNN 9")
    endif()
  endif()
  if(cudnn_problem STREQUAL "")
    list(APPEND CREMA_DEPENDENCY_LIBS ${CREMA_CUDNN_LIBRARY})
    include_directories(SYSTEM ${CREMA_CUDNN_INCLUDE})
    set(CREMA_WITH_CUDNN ON)
  elseif(CREMA_CUDNN STREQUAL "ON")
    message(FATAL_ERROR "CREMA_CUDNN=ON but ${cudnn_problem}")
  else()
    message(STATUS "Crema: cuDNN engine off: ${cudnn_problem}; GPU layers run their CUDA bodies")
  endif()
endif()

# CREMA_DNNL: AUTO builds the oneDNN engine when Debian's libdnnl-dev is found,
# ON requires it, OFF leaves it out. oneDNN runs its threads with OpenMP.
# The oneDNN layers use oneDNN 2.x's API (operation descriptors such as
# convolution_forward::desc), which oneDNN 3.0 removed: another major version
# turns the engine off under AUTO and stops the configure under ON.

# The major version of the oneDNN whose headers are in include_dir, in out_var
# ("" where no version header says it).
function(crema_dnnl_major_version include_dir out_var)
  set(major "")
  foreach(header oneapi/dnnl/dnnl_version.h dnnl_version.h)
    if(major STREQUAL "" AND EXISTS ${include_dir}/${header})
      file(STRINGS ${include_dir}/${header} line REGEX "#define[ \t]+DNNL_VERSION_MAJOR[ \t]+[0-9]+")
      if(line MATCHES "DNNL_VERSION_MAJOR[ \t]+([0-9]+)")
        set(major ${CMAKE_MATCH_1})
      endif()
    endif()
  endforeach()
  set(${out_var} "${major}" PARENT_SCOPE)
endfunction()

set(CREMA_WITH_DNNL OFF)
if(NOT CREMA_DNNL STREQUAL "OFF")
  find_path(CREMA_DNNL_INCLUDE dnnl.hpp)
  find_library(CREMA_DNNL_LIBRARY dnnl)
  find_package(OpenMP COMPONENTS CXX QUIET)
  set(dnnl_problem "")
  if(NOT CREMA_DNNL_INCLUDE OR NOT CREMA_DNNL_LIBRARY)
    set(dnnl_problem "oneDNN was not found (apt-get install libdnnl-dev)")
  elseif(NOT OpenMP_CXX_FOUND)
    set(dnnl_problem "OpenMP, which the oneDNN engine runs on, was not found")
  else()
    crema_dnnl_major_version(${CREMA_DNNL_INCLUDE} CREMA_DNNL_MAJOR)
    if(NOT CREMA_DNNL_MAJOR STREQUAL "2")
      if(CREMA_DNNL_MAJOR STREQUAL "")
        set(found_version "a oneDNN of unknown version")
      else()
        set(found_version "oneDNN ${CREMA_DNNL_MAJOR}.x")
      endif()
      string(CONCAT dnnl_problem "${CREMA_DNNL_INCLUDE} holds ${found_version}; Crema's oneDNN "
                    "layers are written for oneDNN 2.x (Debian 12's libdnnl-dev), whose API "
                    "oneDNN 3.0 removed")
    endif()
  endif()
  if(dnnl_problem STREQUAL "")
    list(APPEND CREMA_DEPENDENCY_LIBS ${CREMA_DNNL_LIBRARY} OpenMP::OpenMP_CXX)
    list(APPEND CREMA_DEFINITIONS CREMA_DNNL)
    set(CREMA_WITH_DNNL ON)
  elseif(CREMA_DNNL STREQUAL "ON")
    message(FATAL_ERROR "CREMA_DNNL=ON but ${dnnl_problem}")
  else()
    message(STATUS "Crema: oneDNN engine off: ${dnnl_problem}; the reference CPU bodies run "
                   "(engines DNNL and DEFAULT fall back to them)")
  endif()
endif()

# CREMA_OPENCV: AUTO reads images (JPEG/PNG folders, encoded Datums) when
# Debian's OpenCV core, imgproc and imgcodecs are installed, ON requires them,
# OFF leaves images out (raw Datums only).
set(CREMA_WITH_OPENCV OFF)
if(NOT CREMA_OPENCV STREQUAL "OFF")
  # Debian ships OpenCV's CMake package only with libopencv-dev, which pulls
  # in every module (GUI included): the three libraries are found directly.
  find_path(CREMA_OPENCV_INCLUDE opencv2/imgcodecs.hpp PATH_SUFFIXES opencv4)
  find_library(CREMA_OPENCV_CORE opencv_core)
  find_library(CREMA_OPENCV_IMGPROC opencv_imgproc)
  find_library(CREMA_OPENCV_IMGCODECS opencv_imgcodecs)
  if(CREMA_OPENCV_INCLUDE AND CREMA_OPENCV_CORE AND CREMA_OPENCV_IMGPROC AND
     CREMA_OPENCV_IMGCODECS)
    list(APPEND CREMA_DEPENDENCY_LIBS ${CREMA_OPENCV_IMGCODECS} ${CREMA_OPENCV_IMGPROC}
                                      ${CREMA_OPENCV_CORE})
    list(APPEND CREMA_DEFINITIONS CREMA_OPENCV)
    include_directories(SYSTEM ${CREMA_OPENCV_INCLUDE})
    set(CREMA_WITH_OPENCV ON)
  elseif(CREMA_OPENCV STREQUAL "ON")
    message(FATAL_ERROR "CREMA_OPENCV=ON but OpenCV was not found (apt-get install "
                        "libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev)")
  else()
    message(STATUS "Crema: OpenCV not found: images (ImageData, WindowData, encoded Datums, "
                   "convert_imageset, classify) are left out")
  endif()
endif()

include(Onnx)
