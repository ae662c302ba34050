# CMake generated Testfile for 
# Source directory: /work/main/tools
# Build directory: /work/main/build-clang/tools
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[sweep_grid_test]=] "/work/main/build-clang/tests/sweep_grid_test")
set_tests_properties([=[sweep_grid_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tools/tests.cmake;1;sf_test;/work/main/tools/tests.cmake;0;;/work/main/tools/CMakeLists.txt;19;include;/work/main/tools/CMakeLists.txt;0;")
