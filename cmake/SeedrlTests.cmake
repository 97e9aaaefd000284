# seedrl_discover_tests(<target> LABEL <label> TIMEOUT <seconds>)
# ---------------------------------------------------------------
# Registers every doctest case of test executable <target> as a CTest entry of its own, with
# the label and timeout given, as doctest's doctest_discover_tests does: after each build the
# executable lists its cases (test/support/test_main.cpp's "ctest" reporter writes them as a
# CTest script) and CTest includes that list. Unlike Debian's doctest 2.4.9 module, any case name
# works (it split names at ';' and '['), and an entry whose filter matches no case fails. A case's
# doctest test suite is a second label ("learning": test/support/test_main.cpp). A case
# that prints "SEEDRL_SKIPPED: <why>" (a test needing something absent) is reported as skipped.
function(seedrl_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABEL;TIMEOUT" "")
  set(list_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_cases.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND $<TARGET_FILE:${target}> --list-test-cases --reporters=ctest "--out=${list_file}"
    BYPRODUCTS "${list_file}"
    COMMENT "Listing the test cases of ${target}"
    VERBATIM)
  file(GENERATE OUTPUT "${include_file}" CONTENT
"set(SEEDRL_TEST_EXECUTABLE \"$<TARGET_FILE:${target}>\")
set(SEEDRL_TEST_LABEL ${arg_LABEL})
set(SEEDRL_TEST_PROPERTIES TIMEOUT ${arg_TIMEOUT} LABELS ${arg_LABEL} WORKING_DIRECTORY \"${CMAKE_CURRENT_BINARY_DIR}\"
  FAIL_REGULAR_EXPRESSION \"test cases: +0 [|]\" SKIP_REGULAR_EXPRESSION \"SEEDRL_SKIPPED:\")
if(EXISTS \"${list_file}\")
  include(\"${list_file}\")
else()
  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
