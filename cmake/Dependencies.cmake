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

if(CREMA_WITH_CUDA)
  list(APPEND CREMA_DEPENDENCY_LIBS CUDA::cudart CUDA::cublas CUDA::curand)
else()
  list(APPEND CREMA_DEFINITIONS CPU_ONLY)
endif()
