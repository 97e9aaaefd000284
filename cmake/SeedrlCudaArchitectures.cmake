# seedrl_default_cuda_architectures(<nvcc>)
# -----------------------------------------
# Unless CMAKE_CUDA_ARCHITECTURES is already set, sets it to every real architecture the given
# nvcc can compile for (nvcc --list-gpu-arch; nvcc 13 no longer accepts sm_70, for example),
# as SASS, plus PTX for the newest so later GPUs can JIT it. Falls back to 80 and 90.
function(seedrl_default_cuda_architectures nvcc)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    return()
  endif()
  execute_process(COMMAND "${nvcc}" --list-gpu-arch
    OUTPUT_VARIABLE _listed ERROR_QUIET RESULT_VARIABLE _result)
  set(_archs "")
  if(_result EQUAL 0)
    string(REGEX MATCHALL "compute_[0-9]+" _computes "${_listed}")
    foreach(_compute IN LISTS _computes)
      string(REPLACE "compute_" "" _number "${_compute}")
      list(APPEND _archs ${_number})
    endforeach()
  endif()
  list(REMOVE_DUPLICATES _archs)
  list(SORT _archs COMPARE NATURAL)
  if(NOT _archs)
    set(_archs 80 90)
  endif()
  list(POP_BACK _archs _newest)
  list(TRANSFORM _archs APPEND "-real")
  list(APPEND _archs ${_newest})
  set(CMAKE_CUDA_ARCHITECTURES "${_archs}" CACHE STRING
    "CUDA architectures of the CUDA backend (default: all that nvcc supports)")
endfunction()
