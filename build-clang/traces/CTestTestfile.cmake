# CMake generated Testfile for 
# Source directory: /work/main/traces
# Build directory: /work/main/build-clang/traces
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[traces_test]=] "/work/main/build-clang/tests/traces_test")
set_tests_properties([=[traces_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/traces/tests.cmake;1;sf_test;/work/main/traces/tests.cmake;0;;/work/main/traces/CMakeLists.txt;29;include;/work/main/traces/CMakeLists.txt;0;")
