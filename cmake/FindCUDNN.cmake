# FindCUDNN
# ---------
# Finds NVIDIA cuDNN, which ships no CMake package.
#
# Hints: CUDNN_ROOT (CMake or environment variable), CUDAToolkit_ROOT, CUDA_PATH, and the
# default toolkit location /usr/local/cuda.
#
# Result variables: CUDNN_FOUND, CUDNN_VERSION, CUDNN_INCLUDE_DIRS, CUDNN_LIBRARIES.
# Imported target:  CUDNN::cudnn
include(FindPackageHandleStandardArgs)

set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_ROOT} $ENV{CUDA_PATH} /usr/local/cuda)
if(CUDAToolkit_INCLUDE_DIRS)
  list(APPEND _cudnn_hints ${CUDAToolkit_INCLUDE_DIRS}/..)
endif()

find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${_cudnn_hints}
  PATH_SUFFIXES include include/x86_64-linux-gnu targets/x86_64-linux/include)
find_library(CUDNN_LIBRARY cudnn
  HINTS ${_cudnn_hints}
  PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu targets/x86_64-linux/lib)

if(CUDNN_INCLUDE_DIR)
  set(_cudnn_version_header "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  if(NOT EXISTS "${_cudnn_version_header}")
    set(_cudnn_version_header "${CUDNN_INCLUDE_DIR}/cudnn.h")
  endif()
  file(STRINGS "${_cudnn_version_header}" _cudnn_version_lines REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
  foreach(_part MAJOR MINOR PATCHLEVEL)
    string(REGEX REPLACE ".*#define CUDNN_${_part} +([0-9]+).*" "\\1" CUDNN_VERSION_${_part}
      "${_cudnn_version_lines}")
  endforeach()
  if(CUDNN_VERSION_MAJOR MATCHES "^[0-9]+$")
    set(CUDNN_VERSION "${CUDNN_VERSION_MAJOR}.${CUDNN_VERSION_MINOR}.${CUDNN_VERSION_PATCHLEVEL}")
  endif()
endif()

find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
  VERSION_VAR CUDNN_VERSION)

if(CUDNN_FOUND)
  set(CUDNN_INCLUDE_DIRS "${CUDNN_INCLUDE_DIR}")
  set(CUDNN_LIBRARIES "${CUDNN_LIBRARY}")
  if(NOT TARGET CUDNN::cudnn)
    add_library(CUDNN::cudnn UNKNOWN IMPORTED)
    set_target_properties(CUDNN::cudnn PROPERTIES
      IMPORTED_LOCATION "${CUDNN_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
