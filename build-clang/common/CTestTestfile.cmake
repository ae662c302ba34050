# CMake generated Testfile for 
# Source directory: /work/main/common
# Build directory: /work/main/build-clang/common
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[common_test]=] "/work/main/build-clang/tests/common_test")
set_tests_properties([=[common_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/common/tests.cmake;1;sf_test;/work/main/common/tests.cmake;0;;/work/main/common/CMakeLists.txt;6;include;/work/main/common/CMakeLists.txt;0;")
