#pragma once
// A probe suite (configs/probes/suite.yaml): several task files, each fine-tuned over several
// seeds, reported per task as mean ± standard deviation and averaged over the tasks, as GLUE-style
// reports are. mlm-finetune --suite runs one; eval.probes may name one.
#include <cstdint>
#include <string>
#include <vector>

namespace mlm::config {

struct SuiteConfig {
  std::string name;
  std::vector<int64_t> seeds;      // each replaces the tasks' finetune.seed in turn
  std::vector<std::string> tasks;  // task files, relative ones resolved against the suite file's
                                   //   directory (the tasks' own data paths stay relative to the
                                   //   working directory)
  std::string origin;              // the file it was read from, for error messages
  // suite.finetune (keys over every task's finetune:) is read with the tasks:
  // task_config.h load_suite_tasks.
};

/// Whether `path` is a suite file rather than a task file: a YAML map whose first key is `suite`.
/// False for anything unreadable (the task file reader then says what is wrong).
bool is_suite_file(const std::string& path);

/// Reads a suite file. `suite.seeds` is a list of distinct integers or a count N (the seeds
/// 1..N). ConfigError naming the file, line and dotted key: an unknown key, a missing name,
/// seeds or tasks, a seed given twice, a task file that does not exist.
SuiteConfig load_suite_config(const std::string& path);

/// The seeds 1..count: what `suite.seeds: N` and mlm-finetune --seeds N mean.
std::vector<int64_t> first_seeds(int64_t count);

}  // namespace mlm::config
