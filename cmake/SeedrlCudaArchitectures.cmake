# seedrl_default_cuda_architectures(<nvcc>)
# -----------------------------------------
# Unless CMAKE_CUDA_ARCHITECTURES is already set, sets it to one real architecture (SASS) per
# major compute capability the given nvcc can compile for (nvcc --list-gpu-arch; nvcc 13 no
# longer accepts sm_70, for example), the lowest of each: a cubin runs on every GPU of its major
# version with an equal or higher minor (sm_80 code on an sm_86 or sm_89 GPU), so the others add
# build time, not reach. Plus PTX of the newest, so later GPUs can JIT it. Falls back to 80 and
# 90.
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
  list(GET _archs -1 _newest)
  set(_real "")
  set(_majors "")
  foreach(_arch IN LISTS _archs)
    math(EXPR _major "${_arch} / 10")
    if(NOT _major IN_LIST _majors)
      list(APPEND _majors ${_major})
      list(APPEND _real "${_arch}-real")
    endif()
  endforeach()
  set(CMAKE_CUDA_ARCHITECTURES "${_real};${_newest}-virtual" CACHE STRING
    "CUDA architectures of the CUDA backend (default: one per major version nvcc supports, and PTX of the newest)")
endfunction()
