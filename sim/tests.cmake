sf_test(sim_test SOURCES energy_test.cc engine_pipeline_test.cc event_queue_test.cc flash_curve_test.cc
  sim_devices_test.cc LIBS sf_sim)
sf_benchmark(event_queue_benchmark SOURCES event_queue_benchmark.cc LIBS sf_sim)
sf_benchmark(simulator_benchmark SOURCES simulator_benchmark.cc LIBS sf_sim sf_devices sf_traces)
