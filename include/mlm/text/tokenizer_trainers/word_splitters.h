#pragma once
// The word splitter of a trained kind: its tokenizer.json normalizer and pre-tokenizer, run by
// the hf room's own implementations, so training counts the words that encoding will see.
#include "mlm/text/tokenizer_trainers/pipeline_json.h"
#include "mlm/text/tokenizer_trainers/word_counts.h"

namespace mlm::text::tokenizer_trainers {

/// Makes one splitter per counting thread.
WordSplitterFactory word_splitter(const PipelineOptions& options);

}  // namespace mlm::text::tokenizer_trainers
