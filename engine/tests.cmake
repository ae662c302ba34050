sf_test(engine_test SOURCES access_profile_test.cc classification_tape_test.cc token_source_test.cc neuron_cache_test.cc request_stream_test.cc sparse_ffn_test.cc policies/weight_queue_test.cc policies/policies_test.cc weight_file_test.cc
        LIBS sf_engine)
sf_benchmark(neuron_cache_benchmark SOURCES neuron_cache_benchmark.cc LIBS sf_engine sf_traces)
