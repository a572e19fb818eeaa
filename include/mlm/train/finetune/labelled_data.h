#pragma once
// A task's labelled examples, read from its JSON-lines files and encoded for the classifier:
// [CLS] text [SEP] (text_pair [SEP]) with token types, or the words of a tagging task with the
// label on each word's first piece (-100 elsewhere), as transformers' examples prepare them.
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/task_config.h"
#include "mlm/text/tokenizer.h"

namespace mlm::train::finetune {

struct LabelledExample {
  std::string text, text_pair;     // sequence tasks (text_pair empty for single texts)
  int64_t label = -1;              // sequence tasks: index into the task's labels
  double value = 0;                // regression tasks: the target
  std::vector<std::string> words;  // token tasks
  std::vector<int64_t> tags;       // token tasks: one label index per word
};

/// Every example of a split. DataError naming the file and line: not JSON, a missing field,
/// an unknown label, a regression target that is not a finite number, words and tags of different lengths; and a split without examples.
std::vector<LabelledExample> read_labelled_split(const config::TaskSection& task, const std::string& path);

/// One example as the model reads it. The ignored label (-100) marks what is not scored.
struct EncodedExample {
  std::vector<int64_t> ids, token_types;
  std::vector<int64_t> labels;  // sequence tasks: one; token tasks: one per id; regression: none
  double target = 0;            // regression tasks
};

struct EncodedSplit {
  std::vector<EncodedExample> examples;
  int64_t truncated = 0;  // examples cut to task.max_seq_len
};

inline constexpr int64_t kIgnoredLabel = -100;

/// Tokenizes a split. Truncation to task.max_seq_len as `tokenizers` does it: a single text
/// keeps its first pieces; a pair is cut longest first (both to half the room when both are
/// too long); a tagging example loses its last pieces, and a word cut off is not scored.
EncodedSplit encode_split(const config::TaskSection& task, const text::Tokenizer& tokenizer,
                          const std::vector<LabelledExample>& examples);

}  // namespace mlm::train::finetune
