#pragma once
// Evaluation on the validation split: fixed order, masks drawn with eval.seed (so every
// checkpoint is scored on the very same masked tokens), sharded across ranks and summed.
// Masked accuracy counts every selected position (kept and random-replaced ones included).
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/model/bert.h"
#include "mlm/text/tokenizer.h"

namespace mlm::train {

struct EvalResult {
  int64_t num_masked = 0;     // selected positions scored, all ranks
  int64_t mlm_correct = 0;
  int64_t unigram_correct = 0;  // scored positions holding the most frequent scored token
  double mlm_loss_sum = 0;    // summed cross-entropy (nats)
  int64_t num_sentence_pairs = 0;  // NSP/SOP labels scored
  int64_t nsp_correct = 0;
  double nsp_loss_sum = 0;
  int64_t sequences = 0;
  int64_t batches = 0;        // all ranks
  double seconds = 0;

  double masked_accuracy() const;
  /// The unigram baseline: the accuracy of always predicting the most frequent token of the
  /// scored positions (an upper bound for any context-free guess).
  double unigram_accuracy() const;
  double mlm_loss() const;    // mean cross-entropy per masked token
  double perplexity() const;  // exp(mlm_loss)
  double nsp_accuracy() const;

  /// {masked_accuracy, mlm_loss, perplexity, num_masked, sequences, unigram_accuracy
  /// [, nsp_accuracy]}.
  nlohmann::json to_json() const;
};

/// Scores `model` on config.data's valid split (eval.batch_size or train.micro_batch_size
/// sequences per batch, at most eval.max_batches batches in all ranks together, precision
/// train.precision). Leaves the model in the mode it found it in. Collective: every rank calls.
EvalResult evaluate(model::BertForPreTraining& model, const config::RunConfig& config,
                    const text::Tokenizer& tokenizer, dist::Communicator& comm,
                    const torch::Device& device);

}  // namespace mlm::train
