// The config.json fuzzer's harness, compiled into the fault suite under another name so that
// fuzz_regression_test.cpp can replay stored inputs through exactly the same checks.
#define LLVMFuzzerTestOneInput mlm_replay_config_json_fuzzer
#include "../../fuzz/config_json_fuzzer.cpp"
