# Lab 05's catalogue of mistakes and its diagnoses, tested on the CPU (tests/mistakes_test.cpp):
# the checks and the catalogue are host code, so this test is built and run with or without CUDA,
# and CI, which has no GPU, proves the catalogue with it. Included by labs/05_cuda_square's
# CMakeLists.txt when the solutions are built, whether or not workbook_add_lab left the CUDA lab out
# for want of a CUDA compiler.
set(source "${CMAKE_CURRENT_LIST_DIR}/tests/mistakes_test.cpp")
add_executable(lab05_mistakes_tests "${source}")
target_include_directories(lab05_mistakes_tests PRIVATE "${PROJECT_SOURCE_DIR}/labs/05_cuda_square/tests")
target_link_libraries(lab05_mistakes_tests PRIVATE workbook::testing_main)
workbook_target_defaults(lab05_mistakes_tests)
gtest_add_tests(TARGET lab05_mistakes_tests SOURCES "${source}" TEST_PREFIX "lab05." TEST_LIST tests)
workbook_test_properties(TESTS ${tests} LABELS "lab05;correctness;mistakes")
