#include "mlm/train/checkpoint/saved_model.h"

#include "mlm/config/phases.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "mlm/config/config_loader.h"
#include "mlm/model/architectures.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/checkpoint/run_checkpoints.h"
#include "mlm/train/checkpoint/trainer_state.h"
#include "mlm/train/optim/ema_weights.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace fs = std::filesystem;

namespace mlm::train {
namespace {

/// The tokenizer that goes with the weights: the directory's own copy, else the config's. A
/// checkpoint's tokenizer.model is a sentencepiece model or, for a wordpiece run, tokenizer.json
/// text (Tokenizer::load tells them apart); an export of a sentencepiece run holds
/// tokenizer.model beside its tokenizer.json, a WordPiece one tokenizer.json and vocab.txt.
text::Tokenizer load_tokenizer(const fs::path& dir, const config::RunConfig& config) {
  for (const char* name : {"tokenizer.model", "spiece.model", "sentencepiece.model", "spm.model", "tokenizer.json", "vocab.txt"}) {
    if (fs::exists(dir / name)) return text::Tokenizer::load((dir / name).string());
  }
  log::info("model", "{} holds no tokenizer model; using tokenizer.model {}", dir.string(),
            config.tokenizer.model);
  return text::Tokenizer::load(config.tokenizer.model);
}

/// The tokenizer's ids must have rows (more rows, as a ModernBERT's padded 50368, are fine);
/// `model_settings` names where the vocabulary size was given (config.yaml or config.json).
void require_vocabulary_fits(const text::Tokenizer& tokenizer, int64_t vocab_size,
                             const std::string& model_settings) {
  if (vocab_size != 0 && vocab_size < tokenizer.size()) {
    const auto path = tokenizer.model_path().empty() ? std::string("the tokenizer") : tokenizer.model_path();
    throw CheckpointError(path + ": the tokenizer has " + std::to_string(tokenizer.size()) +
                          " pieces but " + model_settings + " gives vocab_size " + std::to_string(vocab_size));
  }
}

SavedModel open_checkpoint(const fs::path& dir, const config::RunConfig& config, const TokenizerCheck& check) {
  verify_checkpoint_dir(dir, checkpoint_required_files());
  // A phased run's checkpoint holds the model as its phase configured it (its RoPE bases).
  const auto state = TrainerState::load(dir / "trainer_state.json");
  const auto run_config = config::load_config((dir / "config.yaml").string());
  if (state.phase >= config::phase_count(run_config)) {
    throw CheckpointError((dir / "trainer_state.json").string() + ": phase " + std::to_string(state.phase) +
                          " is not in its config.yaml");
  }
  auto model_config = config::phase_config(run_config, state.phase).model;
  model_config.init_from.clear();
  model_config.rtd_temperature = config.model.rtd_temperature;  // how to evaluate, not the weights
  auto tokenizer = load_tokenizer(dir, config);
  if (check) check(tokenizer);
  require_vocabulary_fits(tokenizer, model_config.vocab_size, (dir / "config.yaml").string());
  auto model = model::make_masked_lm(model_config, model::embedding_rows(model_config, tokenizer.size()),
                                     tokenizer.vocab().ids.pad);
  model::load_model_pt(model, (dir / "model.pt").string());
  return {model_config, std::move(tokenizer), model, state.step};
}

// The model config.json describes, as initialised, with the directory's tokenizer; `weights`
// gets the directory's weights, read (and checked against config.json) before the model is built.
SavedModel hf_directory_model(const fs::path& dir, const config::RunConfig& config, model::TensorDict& weights,
                              const TokenizerCheck& check = {}) {
  const auto config_json = (dir / "config.json").string();
  auto model_config = model::model_config_from_hf(config_json, config.model);
  model_config.init_from.clear();
  auto tokenizer = load_tokenizer(dir, config);
  if (check) check(tokenizer);
  require_vocabulary_fits(tokenizer, model_config.vocab_size, config_json);
  model::require_same_pad_id(config_json, tokenizer.vocab().ids.pad);
  weights = model::read_hf_weights(dir.string());
  model::require_config_matches_weights(model_config, weights, config_json, model::find_hf_weights(dir.string()));
  auto model = model::make_masked_lm(model_config, model::embedding_rows(model_config, tokenizer.size()),
                                     tokenizer.vocab().ids.pad);
  return {model_config, std::move(tokenizer), model, std::nullopt};
}

SavedModel open_hf_directory(const fs::path& dir, const config::RunConfig& config, const TokenizerCheck& check) {
  model::TensorDict weights;
  auto saved = hf_directory_model(dir, config, weights, check);
  saved.model->load_hf_state_dict(weights, model::find_hf_weights(dir.string()));
  return saved;
}

// A directory laid out as an architecture's own (an ELECTRA pair as mlm-export writes it:
// DIR/generator, DIR/discriminator), opened through that architecture's spec.
SavedModel open_owned_directory(const model::ArchitectureSpec& owner, const fs::path& dir,
                                const config::RunConfig& config, const TokenizerCheck& check) {
  auto model_config = owner.directory_config(dir.string(), config.model);
  model_config.init_from.clear();
  const fs::path tokenizer_dir = owner.tokenizer_directory(dir.string());
  auto tokenizer = load_tokenizer(tokenizer_dir, config);
  if (check) check(tokenizer);
  require_vocabulary_fits(tokenizer, model_config.vocab_size, (tokenizer_dir / "config.json").string());
  auto model = model::make_masked_lm(model_config, model::embedding_rows(model_config, tokenizer.size()),
                                     tokenizer.vocab().ids.pad);
  model::init_from_pretrained(model, dir.string());
  return {model_config, std::move(tokenizer), model, std::nullopt};
}

bool is_classification_dir(const fs::path& dir) {
  std::ifstream in(dir / "config.json");
  if (!in) return false;
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("architectures") || !j["architectures"].is_array()) return false;
  for (const auto& name : j["architectures"]) {
    const auto s = name.is_string() ? name.get<std::string>() : "";
    if (s.find("ForSequenceClassification") != std::string::npos || s.find("ForTokenClassification") != std::string::npos)
      return true;
  }
  return false;
}

}  // namespace

SavedModel open_saved_encoder(const fs::path& dir, const config::RunConfig& config, model::TensorDict& file_weights) {
  file_weights.clear();
  if (!is_classification_dir(dir)) return open_saved_model(dir, config);
  return as_user_input([&] {
    auto saved = hf_directory_model(dir, config, file_weights);
    auto& model = saved.model;
    // The model's keys from the file; the MLM head's (outside the encoder) as initialised when
    // the file has none. A missing encoder key stays missing, and the load names it.
    const auto encoder_prefixes = model::architecture_spec(saved.model_config.architecture).encoder_key_prefixes();
    const auto in_encoder = [&](const std::string& key) {
      return std::any_of(encoder_prefixes.begin(), encoder_prefixes.end(),
                         [&](const std::string& prefix) { return key.rfind(prefix, 0) == 0; });
    };
    model::TensorDict merged;
    for (const auto& [key, own] : model->hf_state_dict()) {
      const auto it = std::find_if(file_weights.begin(), file_weights.end(), [&](const auto& kv) { return kv.first == key; });
      if (it != file_weights.end()) {
        merged.emplace_back(key, it->second);
      } else if (!in_encoder(key) && own.data_ptr() != model->word_embeddings().data_ptr()) {  // the tied decoder: the file's embeddings
        merged.emplace_back(key, own.clone());
      }
    }
    model->load_hf_state_dict(merged, model::find_hf_weights(dir.string()));
    return saved;
  });
}

SavedModel open_saved_model(const fs::path& dir, const config::RunConfig& config, const TokenizerCheck& check) {
  if (!fs::is_directory(dir)) throw UsageError("--checkpoint " + dir.string() + ": no such directory");
  if (fs::exists(dir / "trainer_state.json") || fs::exists(dir / "DONE"))
    return as_user_input([&] { return open_checkpoint(dir, config, check); });
  if (fs::exists(dir / "config.json") && !model::find_hf_weights(dir.string()).empty())
    return as_user_input([&] { return open_hf_directory(dir, config, check); });
  if (const auto* owner = model::spec_owning_directory(dir.string()))
    return as_user_input([&] { return open_owned_directory(*owner, dir, config, check); });
  throw UsageError(dir.string() + ": neither an mlm-train checkpoint (trainer_state.json, model.pt) nor a "
                   "Hugging Face model directory (config.json with model.safetensors or pytorch_model.bin)");
}

void use_ema_weights(SavedModel& saved, const fs::path& dir) {
  if (!saved.step) {
    throw UsageError("--ema: " + dir.string() + " is not an mlm-train checkpoint; the EMA weights live in a "
                     "checkpoint's " + kEmaFileName);
  }
  const auto path = dir / kEmaFileName;
  if (!fs::exists(path)) {
    throw UsageError("--ema: " + dir.string() + " holds no EMA weights (" + kEmaFileName +
                     "): its run trained without train.ema_decay");
  }
  as_user_input([&] { model::load_model_pt(saved.model, path.string()); });
}

}  // namespace mlm::train
