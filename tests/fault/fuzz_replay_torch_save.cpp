// The torch.save fuzzer's harness, compiled into the fault suite under another name so that
// fuzz_regression_test.cpp can replay stored inputs through exactly the same checks.
#define LLVMFuzzerTestOneInput mlm_replay_torch_save_fuzzer
#include "../../fuzz/torch_save_fuzzer.cpp"
