// mlm-export: a checkpoint directory -> a Hugging Face model directory.
#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/tools/commands.h"

int main(int argc, char** argv) {
  std::string checkpoint, output, weights = "safetensors";
  bool ema = false;
  return mlm::cli::run_main(
      "mlm-export",
      "Export a checkpoint as a Hugging Face BERT directory (config.json, model.safetensors or "
      "pytorch_model.bin, tokenizer files)",
      argc, argv,
      [&](CLI::App& app) {
        app.add_option("--checkpoint", checkpoint,
                       "Checkpoint directory (RUN/checkpoints/step_XXXXXXXX), or a Hugging Face "
                       "model directory to convert")
            ->required();
        app.add_option("--output", output, "Output directory (created if missing)")->required();
        app.add_option("--weights", weights, "Weight file format: safetensors (model.safetensors) or "
                       "bin (pytorch_model.bin)")
            ->check(CLI::IsMember({"safetensors", "bin"}));
        app.add_flag("--ema", ema, "Export the checkpoint's EMA of the weights (ema.pt, train.ema_decay) "
                     "instead of its weights");
      },
      [&]() {
        mlm::train::export_checkpoint(checkpoint, output,
                                      weights == "bin" ? mlm::model::WeightFormat::bin
                                                       : mlm::model::WeightFormat::safetensors,
                                      ema);
        return 0;
      },
      mlm::cli::libtorch_runtime());
}
