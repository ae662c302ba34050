sf_test(real_test SOURCES real_env_test.cc compute_now_test.cc storage_now_test.cc sparse_ffn_kernel_test.cc weight_memory_test.cc proc_stats_test.cc storage_warmup_test.cc
  LIBS sf_real)
sf_benchmark(sparse_ffn_benchmark SOURCES sparse_ffn_benchmark.cc LIBS sf_real)
