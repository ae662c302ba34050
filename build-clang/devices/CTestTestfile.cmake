# CMake generated Testfile for 
# Source directory: /work/main/devices
# Build directory: /work/main/build-clang/devices
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[devices_test]=] "/work/main/build-clang/tests/devices_test")
set_tests_properties([=[devices_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/devices/tests.cmake;1;sf_test;/work/main/devices/tests.cmake;0;;/work/main/devices/CMakeLists.txt;12;include;/work/main/devices/CMakeLists.txt;0;")
