# GoogleTest for the test suites: the installed one (Debian/Ubuntu: libgtest-dev), or, only when
# asked with -DREDUCTION_FETCH_GTEST=ON, a download. Without either, configure stops at once
# with the command to run: a download attempt on a machine without internet would hang or fail
# deep inside FetchContent instead.
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  if(NOT REDUCTION_FETCH_GTEST)
    message(FATAL_ERROR "reduction-labs: GoogleTest not found. Install it (Debian 12 / Ubuntu 24.04: "
      "sudo apt-get install -y libgtest-dev), or configure with -DREDUCTION_FETCH_GTEST=ON to download "
      "it (needs internet), or with -DREDUCTION_BUILD_TESTS=OFF to build without the tests.")
  endif()
  message(STATUS "reduction-labs: GoogleTest not installed, downloading it (REDUCTION_FETCH_GTEST=ON)")
  include(FetchContent)
  FetchContent_Declare(googletest
    URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz
    DOWNLOAD_EXTRACT_TIMESTAMP ON)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  FetchContent_MakeAvailable(googletest)
endif()
