// mlm-export: a checkpoint directory -> a Hugging Face model directory.
#include "cli/common/cli_app.h"
#include "mlm/train/app/commands.h"

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
        mlm::train::export_checkpoint(checkpoint, output);
        return 0;
      });
}
