// Compiles the precompiled header that every test reuses (see test/CMakeLists.txt).
