# The layer check (test `layers`): every #include "seedrl/..." in include/seedrl and src goes to
# the same layer or one below, and no file there, nor any program or script in examples/,
# bench/, python/ and scripts/, has more than MAX_LINES lines (tests under test/: TEST_MAX_LINES).
#
# The order of the layers is read from docs/runtime.md, the block between the lines
# "<!-- layers: begin -->" and "<!-- layers: end -->": one layer per line, lowest first, as
# "<n>. `folder/` ..." items; a line naming several folders (`nn/`, `backend/`) makes them one
# layer, whose folders may include each other. So the documented order is the checked order.
#
#   cmake -DSOURCE_DIR=<repository> [-DMAX_LINES=400] [-DTEST_MAX_LINES=500] -P check_layers.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers: set SOURCE_DIR")
endif()
if(NOT MAX_LINES)
  set(MAX_LINES 400)
endif()
if(NOT TEST_MAX_LINES)
  set(TEST_MAX_LINES 500)
endif()

file(READ "${SOURCE_DIR}/docs/runtime.md" doc)
string(FIND "${doc}" "<!-- layers: begin -->" begin)
string(FIND "${doc}" "<!-- layers: end -->" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "check_layers: docs/runtime.md has no '<!-- layers: begin -->' ... "
    "'<!-- layers: end -->' block")
endif()
math(EXPR length "${end} - ${begin}")
string(SUBSTRING "${doc}" ${begin} ${length} block)
string(REPLACE "\n" ";" lines "${block}")
set(layer 0)
set(folders)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^[0-9]+\\. ")
    continue()
  endif()
  math(EXPR layer "${layer} + 1")
  # The folders are the backquoted names ending in '/' before the first ':' of the line.
  string(REGEX REPLACE ":.*" "" head "${line}")
  string(REGEX MATCHALL "`[a-z_]+/`" names "${head}")
  if(NOT names)
    message(FATAL_ERROR "check_layers: docs/runtime.md layer line names no `folder/`: ${line}")
  endif()
  foreach(name IN LISTS names)
    string(REGEX REPLACE "[`/]" "" name "${name}")
    set(layer_of_${name} ${layer})
    list(APPEND folders ${name})
  endforeach()
endforeach()
if(layer LESS 2)
  message(FATAL_ERROR "check_layers: fewer than two layers read from docs/runtime.md")
endif()

file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/include/seedrl/*.hpp" "${SOURCE_DIR}/src/*.hpp" "${SOURCE_DIR}/src/*.cpp"
  "${SOURCE_DIR}/src/*.cu" "${SOURCE_DIR}/src/*.cuh")
# Programs and scripts beside the library: the same cap, no layers.
file(GLOB_RECURSE others RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/examples/*.cpp" "${SOURCE_DIR}/examples/*.hpp" "${SOURCE_DIR}/examples/*.c"
  "${SOURCE_DIR}/bench/*.cpp" "${SOURCE_DIR}/bench/*.hpp" "${SOURCE_DIR}/bench/*.py"
  "${SOURCE_DIR}/python/*.py" "${SOURCE_DIR}/scripts/*.py" "${SOURCE_DIR}/scripts/*.sh")
file(GLOB_RECURSE tests RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/test/*.cpp" "${SOURCE_DIR}/test/*.hpp" "${SOURCE_DIR}/test/*.c"
  "${SOURCE_DIR}/test/*.py" "${SOURCE_DIR}/test/*.sh")
set(faults 0)
set(checked 0)
# Reads `file` into `text` (the caller's) and counts a fault when it has more than `cap` lines.
macro(read_and_check_length file cap)
  file(READ "${SOURCE_DIR}/${file}" text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines line_count)
  if(line_count GREATER ${cap})
    message(SEND_ERROR "${file}: ${line_count} lines, more than ${cap}: split it by concept")
    math(EXPR faults "${faults} + 1")
  endif()
endmacro()
foreach(other IN LISTS others)
  read_and_check_length("${other}" ${MAX_LINES})
endforeach()
foreach(test_file IN LISTS tests)
  read_and_check_length("${test_file}" ${TEST_MAX_LINES})
endforeach()
foreach(source IN LISTS sources)
  read_and_check_length("${source}" ${MAX_LINES})
  # The folder under include/seedrl/ or src/; the umbrella headers at the top may include anything.
  if(NOT source MATCHES "^(include/seedrl|src)/([a-z_]+)/")
    continue()
  endif()
  set(folder "${CMAKE_MATCH_2}")
  if(NOT DEFINED layer_of_${folder})
    message(SEND_ERROR "${source}: folder '${folder}/' is in no layer of docs/runtime.md")
    math(EXPR faults "${faults} + 1")
    continue()
  endif()
  set(own ${layer_of_${folder}})
  file(STRINGS "${SOURCE_DIR}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"seedrl/")
  foreach(line IN LISTS includes)
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]+\"seedrl/([a-z_]+)/")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    math(EXPR checked "${checked} + 1")
    if(NOT DEFINED layer_of_${target})
      message(SEND_ERROR "${source}: includes seedrl/${target}/, a folder in no layer")
      math(EXPR faults "${faults} + 1")
    elseif(layer_of_${target} GREATER own)
      string(STRIP "${line}" line)
      message(SEND_ERROR "${source} (layer ${own}, ${folder}/): '${line}' reaches up to layer "
        "${layer_of_${target}} (${target}/); includes run from a layer to itself or below "
        "(docs/runtime.md, layers)")
      math(EXPR faults "${faults} + 1")
    endif()
  endforeach()
endforeach()
list(LENGTH sources files)
if(faults GREATER 0)
  message(FATAL_ERROR "check_layers: ${faults} fault(s) in ${files} files")
endif()
message(STATUS "check_layers: ${layer} layers, ${files} files, ${checked} includes of seedrl's own, "
  "all one way; no file over ${MAX_LINES} lines")
