#pragma once
// A model on disk with its tokenizer, as mlm-eval, mlm-fill and mlm-export open it: an
// mlm-train checkpoint directory or a Hugging Face model directory (an export, or one saved
// by `transformers`).
#include <filesystem>
#include <functional>
#include <optional>

#include "mlm/config/run_config.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"

namespace mlm::train {

struct SavedModel {
  config::ModelConfig model_config;  // the directory's own: config.yaml or config.json
  text::Tokenizer tokenizer;
  model::MaskedLm model{nullptr};  // on the CPU, fp32
  std::optional<int64_t> step;       // a checkpoint's step; none for a Hugging Face directory
};

/// Opens `dir`. The architecture comes from the directory (a checkpoint's config.yaml, a
/// Hugging Face config.json on top of config.model); the tokenizer is the directory's own
/// copy, else config.tokenizer.model. config.model.objective decides whether the NSP head is
/// built. The sampling temperature of an ELECTRA pair is config.model.rtd_temperature (how
/// to evaluate, not part of the weights). A directory holding generator/ and discriminator/ is
/// an exported ELECTRA pair. UsageError for a directory that is neither kind; CheckpointError naming the file
/// for an incomplete checkpoint, damaged weights, weights that disagree with config.json, or
/// a tokenizer whose vocabulary size differs from the model's.
/// `check`, where given, sees the directory's tokenizer before any weight is read (distillation
/// refuses a teacher of another vocabulary with its own error).
using TokenizerCheck = std::function<void(const text::Tokenizer&)>;
SavedModel open_saved_model(const std::filesystem::path& dir, const config::RunConfig& config,
                            const TokenizerCheck& check = {});

/// --ema: replaces `saved`'s weights (opened from `dir` by open_saved_model) with the EMA of the
/// checkpoint's run (its ema.pt, train.ema_decay). UsageError when `dir` is not an mlm-train
/// checkpoint or holds no EMA weights; CheckpointError naming ema.pt when it does not fit.
void use_ema_weights(SavedModel& saved, const std::filesystem::path& dir);

/// What a fine-tuning starts from: open_saved_model's directories, and also a classification
/// one (config.json's architectures ...ForSequenceClassification / ...ForTokenClassification, a
/// previous fine-tuning's or transformers'), whose encoder is loaded while the MLM head it lacks
/// keeps its initialisation (the classifier does not read it). `file_weights` receives such a
/// directory's weights, for the classifier's head; empty otherwise.
SavedModel open_saved_encoder(const std::filesystem::path& dir, const config::RunConfig& config,
                              model::TensorDict& file_weights);

}  // namespace mlm::train
