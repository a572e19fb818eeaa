// mlm-export: a checkpoint directory -> a Hugging Face model directory.
#include <filesystem>

#include "cli/common/cli_app.h"
#include "mlm/config/config_loader.h"
#include "mlm/model/bert.h"
#include "mlm/model/export_hf.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/errors.h"

int main(int argc, char** argv) {
  std::string checkpoint, output;
  return mlm::cli::run_main(
      "mlm-export",
      "Export a checkpoint as a Hugging Face BERT directory (config.json, pytorch_model.bin, "
      "tokenizer)",
      argc, argv,
      [&](CLI::App& app) {
        app.add_option("--checkpoint", checkpoint,
                       "Checkpoint directory (RUN/checkpoints/step_XXXXXXXX) with config.yaml, "
                       "model.pt and tokenizer.model")
            ->required();
        app.add_option("--output", output, "Output directory (created if missing)")->required();
      },
      [&]() {
        namespace fs = std::filesystem;
        const fs::path dir(checkpoint);
        for (const char* name : {"config.yaml", "model.pt", "tokenizer.model"})
          if (!fs::exists(dir / name))
            throw mlm::UsageError(checkpoint + ": not a checkpoint directory (" + name + " is missing)");
        const auto config = mlm::config::load_config((dir / "config.yaml").string());
        const auto tokenizer = mlm::text::Tokenizer::load((dir / "tokenizer.model").string());
        mlm::model::BertForPreTraining model(config.model, tokenizer.size(), tokenizer.vocab().ids.pad);
        mlm::model::load_model_pt(model, (dir / "model.pt").string());
        mlm::model::export_hf(model, {(dir / "tokenizer.model").string(), tokenizer.vocab().ids, tokenizer.size()},
                              output);
        return 0;
      });
}
