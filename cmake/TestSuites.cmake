# One CTest test per GoogleTest suite of a test binary, instead of one per test:
# a process start (loading libcrema and its dependencies, the CUDA libraries
# in a CUDA build) costs more than most tests, above all under the sanitizers.
# Each instance of a typed suite is a suite of its own (BlobTest/0 for float,
# BlobTest/1 for double, /2 and /3 for the GPU), so CTest can still select
# instances by name. The list is read from the binary after each link, as
# gtest_discover_tests does.
#
#   crema_add_test_suites(TARGET [SMOKE regex] [PROPERTIES prop value ...])
#
# Every suite gets the label "unit"; those whose name matches SMOKE also
# "smoke" (the set a CUDA build runs where no device is).
set(CREMA_LIST_SUITES_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/ListTestSuites.cmake)

function(crema_add_test_suites target)
  cmake_parse_arguments(arg "" "SMOKE" "PROPERTIES" ${ARGN})
  set(base ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites)
  add_custom_command(
    TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D EXECUTABLE=$<TARGET_FILE:${target}> -D OUTPUT=${base}.cmake
            -D "SMOKE=${arg_SMOKE}" -D "PROPERTIES=${arg_PROPERTIES}"
            -P ${CREMA_LIST_SUITES_SCRIPT}
    BYPRODUCTS ${base}.cmake
    VERBATIM)
  # CTest reads this file; until the binary is built it names the missing list.
  file(WRITE ${base}_include.cmake
       "if(EXISTS \"${base}.cmake\")\n"
       "  include(\"${base}.cmake\")\n"
       "else()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${base}_include.cmake)
endfunction()
