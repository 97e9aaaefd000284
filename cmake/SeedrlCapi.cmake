# The C ABI (include/seedrl/capi/seedrl.h, src/capi/): libseedrl_c.so, SONAME libseedrl_c.so.0,
# exporting only its seedrl_* functions (a version script; the seedrl it links statically stays
# inside), for environments in any language that calls C. CMake: seedrl::c; pkg-config: seedrl-c.
add_library(seedrl_c SHARED src/capi/common.cpp src/capi/actor.cpp src/capi/policy.cpp)
add_library(seedrl::c ALIAS seedrl_c)
set_target_properties(seedrl_c PROPERTIES EXPORT_NAME c CXX_EXTENSIONS OFF
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
  VERSION 0.1.0 SOVERSION 0)
target_include_directories(seedrl_c
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(seedrl_c PRIVATE seedrl $<BUILD_INTERFACE:seedrl_build_flags>)
set(_seedrl_c_map "${CMAKE_CURRENT_BINARY_DIR}/seedrl_c.map")
file(WRITE "${_seedrl_c_map}" "{ global: seedrl_*; local: *; };\n")
target_link_options(seedrl_c PRIVATE "LINKER:--version-script=${_seedrl_c_map}")
set_property(TARGET seedrl_c APPEND PROPERTY LINK_DEPENDS "${_seedrl_c_map}")
configure_file(cmake/seedrl-c.pc.in "${CMAKE_CURRENT_BINARY_DIR}/seedrl-c.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/seedrl-c.pc"
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
