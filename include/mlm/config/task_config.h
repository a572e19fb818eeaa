#pragma once
// A labelled task to fine-tune on (configs/probes/*.yaml): where its examples are, what they
// hold, how it is scored, and the fine-tuning recipe (transformers' Trainer defaults for
// classification: AdamW, linear warmup and decay, a few epochs, early stopping).
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/enums.h"  // TaskKind, TaskMetric and their spellings
#include "mlm/config/suite_config.h"

namespace mlm::config {

struct TaskSection {
  std::string name;
  TaskKind kind = TaskKind::sequence_classification;
  std::string train, validation, test;  // JSON lines; relative paths from the working directory
  std::string text_field = "text";      // sequence tasks: the text (first segment)
  std::string text_pair_field;          // sequence tasks: the second segment ("" = single)
  std::string label_field = "label";    // sequence: one label; token: one tag per word;
                                        //   regression: a number
  std::string tokens_field = "tokens";  // token tasks: the words
  std::vector<std::string> labels;      // the label set, in the classifier's order (none
                                        //   for regression: one output, the value)
  TaskMetric metric = TaskMetric::accuracy;
  std::string positive_label;           // binary_f1: the label scored ("" = labels[1])
  int64_t max_seq_len = 128;            // longer inputs are truncated (and counted)

  template <class V>
  void visit(V& v) {
    v("name", name);
    v("kind", kind);
    v("train", train);
    v("validation", validation);
    v("test", test);
    v("text_field", text_field);
    v("text_pair_field", text_pair_field);
    v("label_field", label_field);
    v("tokens_field", tokens_field);
    v("labels", labels);
    v("metric", metric);
    v("positive_label", positive_label);
    v("max_seq_len", max_seq_len);
  }
};

struct FinetuneSection {
  int64_t epochs = 3;
  double learning_rate = 5e-5;
  int64_t batch_size = 32;
  double warmup_ratio = 0.1;            // warmup steps = ceil(ratio * total steps)
  double weight_decay = 0.01;           // not on biases and norm weights
  int64_t early_stopping_patience = 1;  // epochs without a better validation score (0 = off)
  int64_t seed = 42;                    // the head's initialisation, dropout, the data order
  bool shuffle = true;                  // a new order of the training examples every epoch
                                        //   (false: file order, as the parity check needs)
  bool dropout = true;                  // false: train with every dropout off
  int64_t max_steps = 0;                // > 0: exactly this many steps (data repeats)
  int64_t max_train_examples = 0;       // > 0: the first this many training examples only
                                        //   (a probe's bound on its cost)
  double max_grad_norm = 1.0;

  template <class V>
  void visit(V& v) {
    v("epochs", epochs);
    v("learning_rate", learning_rate);
    v("batch_size", batch_size);
    v("warmup_ratio", warmup_ratio);
    v("weight_decay", weight_decay);
    v("early_stopping_patience", early_stopping_patience);
    v("seed", seed);
    v("shuffle", shuffle);
    v("dropout", dropout);
    v("max_steps", max_steps);
    v("max_train_examples", max_train_examples);
    v("max_grad_norm", max_grad_norm);
  }
};

/// Whether a larger value of `metric` is a better model (all but mse): what picks the best
/// epoch, stops early, and orders scores.
inline bool higher_is_better(TaskMetric metric) { return metric != TaskMetric::mse; }

struct TaskConfig {
  TaskSection task;
  FinetuneSection finetune;
  std::string origin;  // the file it was read from, for error messages
};

/// Reads a task file. ConfigError naming the file, line and dotted key for unknown keys,
/// values of the wrong type or out of range, a missing name, split or label set.
TaskConfig load_task_config(const std::string& path);

/// A suite's tasks (suite.tasks, each read by load_task_config) with the suite's own
/// `finetune:` keys, when it has them, over each task file's: one recipe for every task (a
/// cheaper screen: fewer epochs, max_train_examples). ConfigError naming the suite file, line
/// and key (`suite.finetune.epochs`) for a bad key or value.
std::vector<TaskConfig> load_suite_tasks(const SuiteConfig& suite);

}  // namespace mlm::config
