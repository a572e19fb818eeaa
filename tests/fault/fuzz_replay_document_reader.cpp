// The document reader fuzzer's harness, compiled into the fault suite under another name so
// that fuzz_regression_test.cpp can replay stored inputs through exactly the same checks.
#define LLVMFuzzerTestOneInput mlm_replay_document_reader_fuzzer
#include "../../fuzz/document_reader_fuzzer.cpp"
