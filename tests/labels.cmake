# Included by ctest after the gtest discovery of every stage's tests (TEST_INCLUDE_FILES, see
# tests/CMakeLists.txt). Besides its stage, a test gets a label from its suite's name:
#   suite ends in "Slow"    -> "slow": scripts/test.sh skips it unless --all is given;
#   suite starts with "Cuda" -> "gpu": needs a CUDA device (skips without one), run by
#                                     scripts/gpu_check.sh with ctest -L gpu.
foreach(mlm_stage_tests IN LISTS MLM_TEST_TARGETS)
  foreach(mlm_test IN LISTS ${mlm_stage_tests}_TESTS)
    string(REGEX REPLACE "^mlm_(.*)_tests$" "\\1" mlm_labels "${mlm_stage_tests}")
    if(mlm_test MATCHES "^[A-Za-z0-9_]*Slow[./]")
      list(APPEND mlm_labels slow)
    endif()
    if(mlm_test MATCHES "^(Fixtures/)?Cuda")
      list(APPEND mlm_labels gpu)
    endif()
    set_tests_properties("${mlm_test}" PROPERTIES LABELS "${mlm_labels}")
  endforeach()
endforeach()
