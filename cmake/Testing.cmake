# sf_test(NAME SOURCES... LIBS ...): a GoogleTest binary registered with CTest.
# Tests run from the repository root so they can reach data/.
function(sf_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  # Each test writes its files (::testing::TempDir()) under the build tree, in a
  # folder of its own, so a run leaves nothing behind in the system's /tmp.
  set(tmp ${CMAKE_BINARY_DIR}/test-tmp/${name})
  file(MAKE_DIRECTORY ${tmp})
  set(env "TEST_TMPDIR=${tmp}/")
  # Cross builds: CTest runs the test through the emulator; tests that start the
  # sparseflash binary themselves prefix it the same way (tests/cli_runner.h).
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " emulator)
    list(APPEND env "SF_TEST_EMULATOR=${emulator}")
  endif()
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
endfunction()

# sf_benchmark(NAME SOURCES... LIBS ...): a Google Benchmark binary (not run by CTest).
function(sf_benchmark name)
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${B_SOURCES})
  target_link_libraries(${name} PRIVATE ${B_LIBS} benchmark::benchmark benchmark::benchmark_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/benchmarks)
endfunction()
