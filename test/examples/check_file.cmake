# Fails unless LIMIT bytes (default 65536) of FILE from OFFSET (default 0) contain every string of
# CONTAINS (a ;-list): what a run wrote, checked after the run (a fixture's test). A safetensors
# file's JSON header starts at OFFSET 8.
#   cmake -DFILE=... "-DCONTAINS=a;b" [-DOFFSET=8] -P check_file.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} was not written")
endif()
if(NOT LIMIT)
  set(LIMIT 65536)
endif()
if(NOT OFFSET)
  set(OFFSET 0)
endif()
file(READ "${FILE}" text OFFSET ${OFFSET} LIMIT ${LIMIT})
foreach(expected IN LISTS CONTAINS)
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${FILE} does not contain '${expected}'")
  endif()
endforeach()
message(STATUS "${FILE}: has ${CONTAINS}")
