// libFuzzer target: mlm-finetune's task file (mlm/config/task_config.h) on arbitrary bytes.
// Only mlm::ConfigError may escape (anything else ends the process and is reported as a crash;
// a hang or a runaway allocation is reported by libFuzzer's -timeout and -rss_limit_mb). A task
// file that loads holds what load_task_config promises: a name, the train and validation
// splits, no labels for a regression task and at least two for any other (exactly two under
// binary_f1), max_seq_len >= 4 and a recipe in range.
//
// Input: the file. Seeds: configs/probes/*.yaml.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "mlm/config/task_config.h"
#include "mlm/util/errors.h"

namespace {

constexpr const char* kTarget = "task_config_fuzzer";

void check(bool ok, const char* what) {
  if (!ok) mlm::fuzz::fail(kTarget, std::string("a task file that loads has ") + what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = mlm::fuzz::scratch_path("task_config_fuzz") + ".yaml";
  mlm::fuzz::write_bytes(kTarget, path, std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const auto c = mlm::config::load_task_config(path);
    const auto& t = c.task;
    const auto& f = c.finetune;
    check(!t.name.empty() && !t.train.empty() && !t.validation.empty(), "no name or split");
    if (t.kind == mlm::config::TaskKind::regression) {
      check(t.labels.empty(), "a regression task with labels");
    } else {
      check(t.labels.size() >= 2, "fewer than two labels");
    }
    if (t.metric == mlm::config::TaskMetric::binary_f1) check(t.labels.size() == 2, "binary_f1 without two labels");
    check(t.max_seq_len >= 4, "max_seq_len below 4");
    check(f.epochs >= 1 && f.batch_size >= 1, "no epoch or an empty batch");
    check(f.learning_rate > 0 && f.warmup_ratio >= 0 && f.warmup_ratio < 1 && f.weight_decay >= 0,
          "a learning rate, warmup ratio or weight decay out of range");
    check(f.early_stopping_patience >= 0 && f.max_steps >= 0 && f.max_train_examples >= 0,
          "a negative count");
  } catch (const mlm::ConfigError&) {
    // the one allowed outcome for a bad file
  }
  std::remove(path.c_str());
  return 0;
}
