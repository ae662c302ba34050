# CMake generated Testfile for 
# Source directory: /work/main/engine/real
# Build directory: /work/main/build-clang/engine/real
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[real_test]=] "/work/main/build-clang/tests/real_test")
set_tests_properties([=[real_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/engine/real/tests.cmake;1;sf_test;/work/main/engine/real/tests.cmake;0;;/work/main/engine/real/CMakeLists.txt;7;include;/work/main/engine/real/CMakeLists.txt;0;")
