# Installs the seedrl build tree into a fresh prefix, then configures, builds and runs a separate
# project that uses only find_package(seedrl CONFIG REQUIRED) and seedrl::seedrl (and seedrl::cuda
# when the package was built with it), seedrl::cli's command line, and a C program of seedrl::c (the C ABI, its pkg-config
# file installed beside it).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

include(${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake)  # run()

run(${CMAKE_COMMAND} --install "${SEEDRL_BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
run("${WORK_DIR}/build/consumer_train")
run("${WORK_DIR}/build/consumer_cli")
run("${WORK_DIR}/build/consumer_c")
foreach(libdir lib lib64 lib/x86_64-linux-gnu)
  if(EXISTS "${prefix}/${libdir}/pkgconfig/seedrl-c.pc")
    set(pc_found TRUE)
  endif()
endforeach()
if(NOT pc_found)
  message(FATAL_ERROR "the package installed no pkgconfig/seedrl-c.pc")
endif()
if(EXISTS "${WORK_DIR}/build/consumer_cuda")
  run("${WORK_DIR}/build/consumer_cuda")
endif()
