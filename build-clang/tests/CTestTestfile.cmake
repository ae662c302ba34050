# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build-clang/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[calibration_test]=] "/work/main/build-clang/tests/calibration_test")
set_tests_properties([=[calibration_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;3;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[byte_accounting_test]=] "/work/main/build-clang/tests/byte_accounting_test")
set_tests_properties([=[byte_accounting_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;4;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[simulate_test]=] "/work/main/build-clang/tests/simulate_test")
set_tests_properties([=[simulate_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;5;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[dev_targets_test]=] "/work/main/build-clang/tests/dev_targets_test")
set_tests_properties([=[dev_targets_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;6;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[tiny_model_test]=] "/work/main/build-clang/tests/tiny_model_test")
set_tests_properties([=[tiny_model_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;7;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[tiny_engine_test]=] "/work/main/build-clang/tests/tiny_engine_test")
set_tests_properties([=[tiny_engine_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;8;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[replay_test]=] "/work/main/build-clang/tests/replay_test")
set_tests_properties([=[replay_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;9;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[sweep_cli_test]=] "/work/main/build-clang/tests/sweep_cli_test")
set_tests_properties([=[sweep_cli_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;11;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[report_render_test]=] "/work/main/build-clang/tests/report_render_test")
set_tests_properties([=[report_render_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;15;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[demo_test]=] "/work/main/build-clang/tests/demo_test")
set_tests_properties([=[demo_test]=] PROPERTIES  WORKING_DIRECTORY "/work/main" _BACKTRACE_TRIPLES "/work/main/cmake/Testing.cmake;8;add_test;/work/main/tests/CMakeLists.txt;19;sf_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[data_checksums_tinystories-relu-260k]=] "sha256sum" "--check" "--quiet" "SHA256SUMS")
set_tests_properties([=[data_checksums_tinystories-relu-260k]=] PROPERTIES  WORKING_DIRECTORY "/work/main/data/tinystories-relu-260k" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;24;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[data_checksums_activation-stats]=] "sha256sum" "--check" "--quiet" "SHA256SUMS")
set_tests_properties([=[data_checksums_activation-stats]=] PROPERTIES  WORKING_DIRECTORY "/work/main/data/activation-stats" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;24;add_test;/work/main/tests/CMakeLists.txt;0;")
