sf_test(devices_test SOURCES device_catalog_test.cc LIBS sf_devices)
