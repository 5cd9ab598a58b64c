# `cmake --install <build> --prefix P` installs what a C++ project needs to
# use Crema:
#   P/lib/libcrema.so                  (RUNPATH $ORIGIN)
#   P/include/crema/...                the public headers and the generated
#                                      crema/proto/crema.pb.h
#   P/lib/cmake/Crema/                 CremaConfig.cmake, its version file and
#                                      the Crema::crema target
#   P/lib/pkgconfig/crema.pc
#
# The targets built here (tools, tests, the Python module) use the library's
# whole interface: every dependency and every definition Dependencies.cmake
# collected. An installed Crema is used through its headers alone, so the
# exported Crema::crema carries only what they need: their definitions
# (CREMA_CUDA, CREMA_OPENCV, CREMA_NCCL change what the headers declare), the
# libraries whose headers they include (protobuf, glog and its gflags, Boost
# thread, cblas.h's folder, OpenCV in builds with it, CUDA's runtime, cuBLAS and
# cuRAND in CUDA builds), and nothing the library only uses inside
# (LMDB, LevelDB, HDF5, oneDNN, MPI, ONNX: libcrema.so's own dependencies).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CREMA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Crema)

# The definitions that change what the public headers declare: those of
# CREMA_DEFINITIONS that a header's #if, #ifdef, #ifndef or #elif tests
# (today CREMA_CUDA, CREMA_OPENCV and CREMA_NCCL).
file(GLOB_RECURSE crema_public_headers ${CMAKE_SOURCE_DIR}/include/crema/*.hpp)
set(crema_header_conditions "")
foreach(header IN LISTS crema_public_headers)
  file(STRINGS ${header} conditions REGEX "^[ \t]*#[ \t]*(if|elif)")
  string(APPEND crema_header_conditions "${conditions}\n")
endforeach()
set(CREMA_HEADER_DEFINITIONS "")
foreach(definition IN LISTS CREMA_DEFINITIONS)
  string(REGEX REPLACE "=.*" "" name "${definition}")
  if(crema_header_conditions MATCHES "[^A-Za-z0-9_]${name}([^A-Za-z0-9_]|$)")
    list(APPEND CREMA_HEADER_DEFINITIONS ${definition})
  endif()
endforeach()

# The libraries whose headers the public headers include. Crema::cblas and
# Crema::opencv are made by CremaConfig.cmake (both are found here as plain
# paths, which it finds again on the consumer's machine).
set(CREMA_HEADER_LIBS Threads::Threads Boost::thread Boost::system glog::glog gflags
                      protobuf::libprotobuf Crema::cblas)
if(CREMA_WITH_OPENCV)
  list(APPEND CREMA_HEADER_LIBS Crema::opencv)
endif()
if(CREMA_WITH_CUDA)
  list(APPEND CREMA_HEADER_LIBS CUDA::cudart CUDA::cublas CUDA::curand)
endif()

# Sets crema's interface PROPERTY to what it holds now in this build tree and
# to INSTALL_ITEMS in the installed package.
function(crema_split_interface property install_items)
  get_target_property(build_items crema ${property})
  if(NOT build_items)
    set(build_items "")
  endif()
  list(TRANSFORM build_items PREPEND "$<BUILD_INTERFACE:")
  list(TRANSFORM build_items APPEND ">")
  list(TRANSFORM install_items PREPEND "$<INSTALL_INTERFACE:")
  list(TRANSFORM install_items APPEND ">")
  set(items ${build_items} ${install_items})
  set_target_properties(crema PROPERTIES ${property} "${items}")
endfunction()

crema_split_interface(INTERFACE_LINK_LIBRARIES "${CREMA_HEADER_LIBS}")
crema_split_interface(INTERFACE_COMPILE_DEFINITIONS "${CREMA_HEADER_DEFINITIONS}")

# The headers are C++17.
set_property(TARGET crema APPEND PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_17)

# The installed library finds its dependencies outside the system folders
# (CUDA's, for one) through its RUNPATH, and a program linked to it finds it
# through the program's own (CMake's default: the folders it linked from).
set_target_properties(crema PROPERTIES INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS crema EXPORT CremaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/crema DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The generated schema header, which net.hpp, blob.hpp and layer.hpp include.
install(FILES ${CREMA_PROTO_OUT}/crema.pb.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/crema/proto)

install(EXPORT CremaTargets NAMESPACE Crema:: DESTINATION ${CREMA_INSTALL_CMAKEDIR})
if(CREMA_WITH_OPENCV)
  get_filename_component(CREMA_OPENCV_CORE_DIR ${CREMA_OPENCV_CORE} DIRECTORY)
endif()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/CremaConfig.cmake.in
  ${CMAKE_BINARY_DIR}/CremaConfig.cmake INSTALL_DESTINATION ${CREMA_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/CremaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/CremaConfig.cmake ${CMAKE_BINARY_DIR}/CremaConfigVersion.cmake
  DESTINATION ${CREMA_INSTALL_CMAKEDIR})

# crema.pc: the same flags for builds without CMake. Its prefix is found from
# the file's own place, so the installed tree can move.
list(TRANSFORM CREMA_HEADER_DEFINITIONS PREPEND "-D" OUTPUT_VARIABLE CREMA_PC_DEFINITIONS)
set(CREMA_PC_INCLUDES "-I${CBLAS_INCLUDE_DIR}")
set(CREMA_PC_LIBS "-lboost_thread -pthread")
if(CREMA_WITH_OPENCV)
  string(APPEND CREMA_PC_INCLUDES " -I${CREMA_OPENCV_INCLUDE}")
  string(APPEND CREMA_PC_LIBS " ${CREMA_OPENCV_IMGCODECS} ${CREMA_OPENCV_IMGPROC} ${CREMA_OPENCV_CORE}")
endif()
if(CREMA_WITH_CUDA)
  list(JOIN CUDAToolkit_INCLUDE_DIRS " -I" cuda_includes)
  string(APPEND CREMA_PC_INCLUDES " -I${cuda_includes}")
  string(APPEND CREMA_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcublas -lcurand")
endif()
list(JOIN CREMA_PC_DEFINITIONS " " CREMA_PC_DEFINITIONS)
file(RELATIVE_PATH CREMA_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" CREMA_PC_TO_PREFIX "${CREMA_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/crema.pc.in ${CMAKE_BINARY_DIR}/crema.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/crema.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
