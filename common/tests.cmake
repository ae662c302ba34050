sf_test(common_test SOURCES atomic_file_test.cc units_test.cc random_test.cc worker_pool_test.cc heap_reuse_test.cc shell_word_test.cc LIBS sf_common)
