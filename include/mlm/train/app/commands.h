#pragma once
// What mlm-train, mlm-eval and mlm-export do, behind a header without LibTorch, so that
// those three mains (src/cli/) only parse options and print, and compile in seconds.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "mlm/config/run_config.h"
#include "mlm/train/loop/eval_result.h"

namespace mlm::train {

/// mlm-train: trains from `config`, resuming as `resume` says ("" a new run, "latest" the
/// newest complete checkpoint, or a checkpoint directory). Returns the exit code: 0 done,
/// 130/143 stopped by SIGINT/SIGTERM after writing a checkpoint.
int run_training(const config::RunConfig& config, const std::string& resume);

struct SavedModelEval {
  EvalResult result;
  std::optional<int64_t> step;  // the checkpoint's step; none for an exported model
  bool is_main = true;          // rank 0 (or the only process): the one that reports
};

/// mlm-eval: scores a checkpoint directory or an exported (Hugging Face format) model
/// directory on config.data.valid_files. A checkpoint's own model settings replace
/// config.model; the directory's tokenizer model, when it holds one, replaces
/// tokenizer.model. Collective under torchrun: every rank calls.
SavedModelEval evaluate_saved_model(config::RunConfig config, const std::filesystem::path& dir);

/// mlm-export: a checkpoint directory (config.yaml, model.pt, tokenizer.model) -> a Hugging
/// Face BERT directory at `output` (created if missing).
void export_checkpoint(const std::filesystem::path& checkpoint, const std::filesystem::path& output);

}  // namespace mlm::train
