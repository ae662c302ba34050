# CMake generated Testfile for 
# Source directory: /work/main/engine
# Build directory: /work/main/build-clang/engine
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[engine_test]=] "/work/main/build-clang/tests/engine_test")
set_tests_properties([=[engine_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/engine/tests.cmake;1;sf_test;/work/main/engine/tests.cmake;0;;/work/main/engine/CMakeLists.txt;40;include;/work/main/engine/CMakeLists.txt;0;")
subdirs("real")
