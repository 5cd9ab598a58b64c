# CREMA_PYTHON: AUTO builds the Python package (crema._crema with pybind11,
# numpy, protobuf's Python runtime) when all of them are found; ON requires
# them; OFF skips it. Debian's interpreter (/usr/bin/python3), which the
# install script gives those packages, is preferred to another python3 on the
# PATH; set Python3_EXECUTABLE to choose another.
set(CREMA_WITH_PYTHON OFF)
if(NOT CREMA_PYTHON STREQUAL "OFF")
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module Development.Embed NumPy QUIET)
  find_package(pybind11 CONFIG QUIET)
  set(crema_python_missing "")
  if(NOT Python3_FOUND)
    set(crema_python_missing "python3-dev and python3-numpy")
  elseif(NOT pybind11_FOUND)
    set(crema_python_missing "pybind11-dev")
  else()
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import google.protobuf"
                    RESULT_VARIABLE crema_no_protobuf OUTPUT_QUIET ERROR_QUIET)
    if(crema_no_protobuf)
      set(crema_python_missing "python3-protobuf (for ${Python3_EXECUTABLE})")
    endif()
  endif()
  if(crema_python_missing STREQUAL "")
    set(CREMA_WITH_PYTHON ON)
  elseif(CREMA_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "CREMA_PYTHON=ON but ${crema_python_missing} not found "
                        "(scripts/install_deps.sh installs it)")
  else()
    message(STATUS "Crema: Python package off: ${crema_python_missing} not found")
  endif()
endif()
