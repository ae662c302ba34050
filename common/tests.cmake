sf_test(common_test SOURCES units_test.cc random_test.cc LIBS sf_common)
