// The task file fuzzer's harness, compiled into the fault suite under another name so that
// fuzz_regression_test.cpp can replay stored inputs through exactly the same checks.
#define LLVMFuzzerTestOneInput mlm_replay_task_config_fuzzer
#include "../../fuzz/task_config_fuzzer.cpp"
