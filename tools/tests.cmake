sf_test(sweep_grid_test SOURCES sweep_grid_test.cc LIBS sf_tools)
sf_test(shared_classification_test SOURCES shared_classification_test.cc LIBS sf_tools)
sf_test(decoded_traces_test SOURCES decoded_traces_test.cc LIBS sf_tools)
