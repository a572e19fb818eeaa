#include "mlm/train/app/commands.h"

#include "mlm/config/config_loader.h"
#include "mlm/config/validate.h"
#include "mlm/model/export_hf.h"
#include "mlm/train/app/bootstrap.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/checkpoint/trainer_state.h"
#include "mlm/train/loop/evaluator.h"
#include "mlm/train/loop/trainer.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace fs = std::filesystem;

namespace mlm::train {
namespace {

/// The tokenizer that goes with the weights: the checkpoint's (or export's) own copy, else
/// the config's tokenizer.model.
text::Tokenizer load_tokenizer(const fs::path& dir, const config::RunConfig& config) {
  for (const char* name : {"tokenizer.model", "spiece.model", "sentencepiece.model"}) {
    if (fs::exists(dir / name)) return text::Tokenizer::load((dir / name).string());
  }
  log::info("eval", "{} holds no tokenizer model; using tokenizer.model {}", dir.string(),
            config.tokenizer.model);
  return text::Tokenizer::load(config.tokenizer.model);
}

}  // namespace

int run_training(const config::RunConfig& config, const std::string& resume) {
  config::require_training_data(config);
  Trainer trainer(config, {resume, nullptr, nullptr});
  return trainer.run();
}

SavedModelEval evaluate_saved_model(config::RunConfig config, const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw UsageError("--checkpoint " + dir.string() + ": no such directory");
  }
  SavedModelEval out;
  const bool is_checkpoint = fs::exists(dir / "trainer_state.json") || fs::exists(dir / "DONE");
  if (is_checkpoint) {
    verify_checkpoint_dir(dir, checkpoint_required_files());
    // The weights decide the architecture: take the checkpoint's model settings.
    const auto saved = config::load_config((dir / "config.yaml").string());
    config.model = saved.model;
    config.model.init_from.clear();
    out.step = TrainerState::load(dir / "trainer_state.json").step;
  }

  const auto process = bootstrap(config);

  const auto tokenizer = load_tokenizer(dir, config);
  model::BertForPreTraining model(config.model, tokenizer.size(), tokenizer.vocab().ids.pad);
  if (is_checkpoint) {
    model::load_model_pt(model, (dir / "model.pt").string());
  } else {
    model::init_from_pretrained(model, dir.string());
  }
  model->to(process.device);
  out.result = evaluate(model, config, tokenizer, *process.comm, process.device);
  out.is_main = process.comm->is_main();
  return out;
}

void export_checkpoint(const fs::path& checkpoint, const fs::path& output) {
  for (const char* name : {"config.yaml", "model.pt", "tokenizer.model"}) {
    if (!fs::exists(checkpoint / name)) {
      throw UsageError(checkpoint.string() + ": not a checkpoint directory (" + name +
                       " is missing)");
    }
  }
  const auto config = config::load_config((checkpoint / "config.yaml").string());
  const auto tokenizer_model = (checkpoint / "tokenizer.model").string();
  const auto tokenizer = text::Tokenizer::load(tokenizer_model);
  model::BertForPreTraining model(config.model, tokenizer.size(), tokenizer.vocab().ids.pad);
  model::load_model_pt(model, (checkpoint / "model.pt").string());
  model::export_hf(model, {tokenizer_model, tokenizer.vocab().ids, tokenizer.size()},
                   output.string());
}

}  // namespace mlm::train
