# CMake generated Testfile for 
# Source directory: /work/main
# Build directory: /work/main/build-clang
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("common")
subdirs("traces")
subdirs("devices")
subdirs("engine")
subdirs("sim")
subdirs("reports")
subdirs("tools")
subdirs("tests")
