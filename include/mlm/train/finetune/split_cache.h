#pragma once
// Tokenized task splits kept for the life of the process: a run's probes tokenize each task once
// (not at every evaluation, nor again in a later phase), whatever reads it next gets the same
// encoded examples. Tokenizing is cheap next to fine-tuning (0.1-0.2 s of a probe's minute or
// more on the mini models, docs/PROBES.md) but it is work done again for nothing.
#include <memory>

#include "mlm/config/task_config.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/finetune/finetune.h"

namespace mlm::train::finetune {

/// load_task_splits(task, tokenizer), from the cache when the same tokenizer (its serialized
/// model and vocabulary size) has encoded the same split files (path, size and modification
/// time) under the same task keys (kind, fields, labels, max_seq_len, max_train_examples)
/// before. A file changed since is read again. Thread-safe.
std::shared_ptr<const TaskSplits> cached_task_splits(const config::TaskConfig& task, const text::Tokenizer& tokenizer);

}  // namespace mlm::train::finetune
