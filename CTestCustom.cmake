# A plain `ctest` in the source root (see CTestTestfile.cmake) ends with the one-line reason of each
# test that failed or was skipped, from the log it wrote (cmake/TestSummary.cmake).
set(CTEST_CUSTOM_PRE_TEST "cmake -DTESTING=Testing -DSTART=1 -P cmake/TestSummary.cmake")
set(CTEST_CUSTOM_POST_TEST "cmake -DTESTING=Testing -P cmake/TestSummary.cmake")
