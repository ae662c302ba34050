# CMake generated Testfile for 
# Source directory: /work/main/sim
# Build directory: /work/main/build-clang/sim
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[sim_test]=] "/work/main/build-clang/tests/sim_test")
set_tests_properties([=[sim_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/sim/tests.cmake;1;sf_test;/work/main/sim/tests.cmake;0;;/work/main/sim/CMakeLists.txt;5;include;/work/main/sim/CMakeLists.txt;0;")
