# CMake generated Testfile for 
# Source directory: /work/main/reports
# Build directory: /work/main/build-clang/reports
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[reports_test]=] "/work/main/build-clang/tests/reports_test")
set_tests_properties([=[reports_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/reports/tests.cmake;1;sf_test;/work/main/reports/tests.cmake;0;;/work/main/reports/CMakeLists.txt;7;include;/work/main/reports/CMakeLists.txt;0;")
add_test([=[report_test]=] "/work/main/build-clang/tests/report_test")
set_tests_properties([=[report_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/reports/tests.cmake;2;sf_test;/work/main/reports/tests.cmake;0;;/work/main/reports/CMakeLists.txt;7;include;/work/main/reports/CMakeLists.txt;0;")
