# Script mode (cmake -P), run after a test binary links: writes OUTPUT, a CTest
# file with one add_test per GoogleTest suite of EXECUTABLE (see TestSuites.cmake).
# Inputs: EXECUTABLE, OUTPUT, SMOKE (a regex of suite names, may be empty),
# PROPERTIES (a list of test property names and values for every suite).
execute_process(
  COMMAND ${EXECUTABLE} --gtest_list_tests
  OUTPUT_VARIABLE listing
  ERROR_VARIABLE errors
  RESULT_VARIABLE status
  TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status}):\n${errors}")
endif()

# A suite's line starts in the first column and ends its name with a dot
# ("BlobTest/0.  # TypeParam = float"); its tests' lines are indented.
string(REPLACE ";" "" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
set(count 0)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^([A-Za-z0-9_/]+)\\.")
    continue()
  endif()
  set(suite ${CMAKE_MATCH_1})
  set(labels unit)
  if(SMOKE AND suite MATCHES "${SMOKE}")
    list(APPEND labels smoke)
  endif()
  string(APPEND script "add_test([==[${suite}]==] [==[${EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n")
  string(APPEND script "set_tests_properties([==[${suite}]==] PROPERTIES LABELS \"${labels}\")\n")
  if(PROPERTIES)
    set(quoted "")
    foreach(item IN LISTS PROPERTIES)
      string(APPEND quoted " [==[${item}]==]")
    endforeach()
    string(APPEND script "set_tests_properties([==[${suite}]==] PROPERTIES${quoted})\n")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} lists no test suite")
endif()
file(WRITE ${OUTPUT} "${script}")
