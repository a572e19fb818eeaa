// The safetensors fuzzer's harness, compiled into the fault suite under another name so that
// fuzz_regression_test.cpp can replay stored inputs through exactly the same checks.
#define LLVMFuzzerTestOneInput mlm_replay_safetensors_fuzzer
#include "../../fuzz/safetensors_fuzzer.cpp"
