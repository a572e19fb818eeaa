# Included by ctest after gtest discovery of mlm_fault_tests (TEST_INCLUDE_FILES, see
# tests/CMakeLists.txt): every test of a suite whose name ends in "Slow" gets the label "slow"
# besides "fault", so scripts/test.sh (ctest -LE slow) skips it unless --all is given.
foreach(mlm_fault_test IN LISTS mlm_fault_tests_TESTS)
  if(mlm_fault_test MATCHES "^[A-Za-z0-9_]*Slow[./]")
    set_tests_properties("${mlm_fault_test}" PROPERTIES LABELS "fault;slow")
  endif()
endforeach()
