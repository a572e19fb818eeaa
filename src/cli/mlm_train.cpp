// mlm-train: pretrain a BERT masked language model from one YAML run config.
//   mlm-train --config F [--set k=v]... [--resume auto|latest|DIR]
// Exit codes: 0 done, 1 runtime failure, 2 bad usage/config, 130/143 stopped by
// SIGINT/SIGTERM after writing a checkpoint.
#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/tools/commands.h"
#include "mlm/util/errors.h"

int main(int argc, char** argv) {
  mlm::cli::ConfigOptions config_options;
  std::string resume;
  return mlm::cli::run_main(
      "mlm-train", "Pretrain a BERT masked language model from a YAML run config.", argc, argv,
      [&](CLI::App& app) {
        config_options.add_to(app);
        app.add_option("--resume", resume,
                       "Continue a run (overrides train.resume): 'auto' (the newest complete "
                       "checkpoint under train.output_dir, a new run when there is none; "
                       "refused when model, data or masking settings changed), 'latest' (as "
                       "auto, data and masking changes allowed) or a checkpoint directory");
      },
      [&]() -> int {
        mlm::config::RunConfig config;
        if (!config_options.load(config)) return mlm::kExitOk;  // --print-config
        return mlm::train::run_training(config, resume);
      },
      mlm::cli::libtorch_runtime());
}
