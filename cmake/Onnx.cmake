# CREMA_ONNX: AUTO builds `crema export` (a net and its weights written as an
# ONNX model) when Debian's libonnx-dev is found, ON requires it, OFF leaves it out.
#
# The ONNX schema comes from libonnx-dev's libonnx_proto, not from compiling
# its onnx.proto here: python3-onnx's extension links that same library, and a
# process that loads both the crema package and onnx (the export tests do)
# must register the schema's descriptors once; a second copy compiled into
# libcrema would abort protobuf with "File already exists in database".
# Debian generated those headers with our protobuf (3.21), which they check.
set(CREMA_ONNX "AUTO" CACHE STRING "Build `crema export` to ONNX: AUTO (when found), ON, OFF")
set_property(CACHE CREMA_ONNX PROPERTY STRINGS AUTO ON OFF)

set(CREMA_WITH_ONNX OFF)
if(NOT CREMA_ONNX STREQUAL "OFF")
  find_package(ONNX CONFIG QUIET)
  if(TARGET onnx_proto)
    list(APPEND CREMA_DEPENDENCY_LIBS onnx_proto)
    list(APPEND CREMA_DEFINITIONS CREMA_ONNX)
    set(CREMA_WITH_ONNX ON)
  elseif(CREMA_ONNX STREQUAL "ON")
    message(FATAL_ERROR "CREMA_ONNX=ON but ONNX was not found (apt-get install libonnx-dev)")
  else()
    message(STATUS "Crema: ONNX not found: `crema export` is left out")
  endif()
endif()
