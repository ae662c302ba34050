sf_test(traces_test
  SOURCES array_lru_test.cc expert_router_test.cc generator_test.cc model_catalog_test.cc
          neuron_stream_test.cc read_ahead_generator_test.cc
          skew_test.cc
          text_format_test.cc npy_import_test.cc trace_io_test.cc trace_damage_test.cc
          trace_stats_test.cc
  LIBS sf_traces)
sf_benchmark(trace_io_benchmark SOURCES trace_io_benchmark.cc LIBS sf_traces)
add_executable(trace_stream_check trace_stream_check.cc)
target_link_libraries(trace_stream_check PRIVATE sf_traces)
set_target_properties(trace_stream_check PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/benchmarks)
