sf_test(sim_test SOURCES event_queue_test.cc flash_curve_test.cc LIBS sf_sim)
sf_benchmark(event_queue_benchmark SOURCES event_queue_benchmark.cc LIBS sf_sim)
