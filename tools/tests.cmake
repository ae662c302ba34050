sf_test(sweep_grid_test SOURCES sweep_grid_test.cc LIBS sf_tools)
