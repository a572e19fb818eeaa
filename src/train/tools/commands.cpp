#include "mlm/train/tools/commands.h"

#include "mlm/config/validate.h"
#include "mlm/model/pretrained/export_hf.h"
#include "mlm/text/hf/hf_tokenizer_files.h"
#include "mlm/train/loop/evaluator.h"
#include "mlm/train/run/bootstrap.h"
#include "mlm/train/run/trainer.h"
#include "mlm/train/checkpoint/saved_model.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace fs = std::filesystem;

namespace mlm::train {

int run_training(const config::RunConfig& config, const std::string& resume) {
  config::require_training_data(config);
  Trainer trainer(config, {resume, nullptr, nullptr});
  return trainer.run();
}

SavedModelEval evaluate_saved_model(config::RunConfig config, const fs::path& dir, bool ema) {
  auto saved = open_saved_model(dir, config);
  if (ema) use_ema_weights(saved, dir);
  config.model = saved.model_config;  // the weights decide the architecture
  config::require_position_room(config.model, config.data.seq_len, saved.model->pad_id());
  const auto process = bootstrap(config);
  saved.model->to(process.device);
  SavedModelEval out;
  out.step = saved.step;
  out.result = evaluate(saved.model, config, saved.tokenizer, *process.comm, process.device,
                        process.compute_dtype);
  out.is_main = process.comm->is_main();
  return out;
}

void export_checkpoint(const fs::path& checkpoint, const fs::path& output, model::WeightFormat format,
                       bool ema) {
  auto saved = open_saved_model(checkpoint, config::RunConfig{});
  if (ema) use_ema_weights(saved, checkpoint);
  std::error_code ec;
  fs::create_directories(output, ec);
  if (ec || !fs::is_directory(output))
    throw UsageError("--output " + output.string() + ": cannot create directory" + (ec ? ": " + ec.message() : ""));
  for (const auto& dir : model::write_hf_model(saved.model, output.string(), format))
    text::write_hf_tokenizer(saved.tokenizer, dir, saved.model->max_sequence_length());
  log::info("export", "wrote Hugging Face model{} to {}", ema ? " (the EMA weights)" : "", output.string());
}

}  // namespace mlm::train
