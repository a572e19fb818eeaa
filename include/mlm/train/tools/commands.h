#pragma once
// What mlm-train, mlm-eval, mlm-export and mlm-fill do, behind a header without LibTorch, so that
// the mains (src/cli/) only parse options and print, and compile in seconds.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlm/config/run_config.h"
#include "mlm/model/hf/weight_format.h"
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
/// tokenizer.model. `ema`: the checkpoint's EMA weights (use_ema_weights). Collective under
/// torchrun: every rank calls.
SavedModelEval evaluate_saved_model(config::RunConfig config, const std::filesystem::path& dir,
                                    bool ema = false);

/// mlm-export: a checkpoint directory (or a Hugging Face one, to convert its weights) -> a
/// Hugging Face BERT directory at `output` (created if missing, once the input has been read):
/// config.json, the weights in `format`, and the tokenizer files. `ema`: the checkpoint's EMA
/// weights instead of its weights (use_ema_weights; nothing is written when it has none).
void export_checkpoint(const std::filesystem::path& checkpoint, const std::filesystem::path& output,
                       model::WeightFormat format, bool ema = false);

struct MaskPrediction {
  int32_t token_id = 0;
  std::string token;  // the id decoded alone, as the fill-mask pipeline's token_str
  double score = 0;   // softmax probability
};

/// The top predictions for every [MASK] of one text.
struct FilledText {
  std::string text;
  std::vector<std::vector<MaskPrediction>> masks;  // in text order, best first
};

/// mlm-fill: the `top_k` most probable tokens for each literal "[MASK]" in each text, from a
/// checkpoint or Hugging Face directory, on the CPU in fp32. UsageError for a text without a
/// [MASK] or longer than the model's positions.
std::vector<FilledText> fill_masks(const std::filesystem::path& dir, const std::vector<std::string>& texts,
                                   int64_t top_k);

/// mlm-finetune: the model of `model_dir` (a checkpoint or a Hugging Face directory) with a new
/// classification head, fine-tuned on the task of `task_file` (configs/probes/*.yaml) on the
/// CPU. Returns the report: every step's loss, learning rate and gradient norm, the validation
/// scores of every epoch, the best epoch's, and the test scores with its weights. With
/// `output`, the fine-tuned ...For{Sequence,Token}Classification directory (config.json with the
/// label names, model.safetensors, tokenizer files). ConfigError / DataError (exit 2) for a bad
/// task file or split, naming the file and line. `precision` as train.precision (auto: bf16
/// autocast where the CPU has AVX512-BF16).
nlohmann::json finetune_saved_model(const std::filesystem::path& model_dir, const std::string& task_file,
                                    const std::optional<std::filesystem::path>& output,
                                    config::Precision precision = config::Precision::auto_detect);

/// mlm-finetune --suite: the model of `model_dir` fine-tuned on every task of the suite file
/// (config/suite_config.h) once per seed (`seeds`, when given, replacing the suite's), a new head
/// each time. Returns the report: per task its metric's mean, sample standard deviation and
/// per-seed values on validation and test, and the average over the tasks of their means (tasks
/// scored by mse, where lower is better, left out). Every task file and split is read before the
/// first fine-tuning: a bad one is a ConfigError / DataError (exit 2) with nothing run.
nlohmann::json finetune_suite(const std::filesystem::path& model_dir, const std::string& suite_file,
                              const std::vector<int64_t>& seeds = {},
                              config::Precision precision = config::Precision::auto_detect);

}  // namespace mlm::train
