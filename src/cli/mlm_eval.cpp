// mlm-eval: masked-token accuracy, MLM loss and perplexity of a checkpoint or an exported
// (Hugging Face format) model directory on the validation split (or on --data files).
//   mlm-eval --config F --checkpoint DIR [--data FILE]... [--json]
#include <fmt/format.h>

#include <iostream>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/loop/collapse_watch.h"
#include "mlm/train/tools/commands.h"
#include "mlm/util/errors.h"

int main(int argc, char** argv) {
  mlm::cli::ConfigOptions config_options;
  std::string checkpoint;
  std::vector<std::string> data_files;
  bool json = false, ema = false;
  return mlm::cli::run_main(
      "mlm-eval",
      "Evaluate a checkpoint or an exported model: masked-token accuracy, MLM loss, perplexity.",
      argc, argv,
      [&](CLI::App& app) {
        config_options.add_to(app);
        app.add_option("--checkpoint", checkpoint,
                       "A checkpoint directory (runs/x/checkpoints/step_...) or an exported "
                       "model directory (pytorch_model.bin)")
            ->required();
        app.add_option("--data", data_files,
                       "Evaluate on these files (paths or globs) instead of data.valid_files")
            ->take_all();
        app.add_flag("--json", json, "Print one JSON object instead of text");
        app.add_flag("--ema", ema, "Evaluate the checkpoint's EMA of the weights (ema.pt, train.ema_decay)");
      },
      [&]() -> int {
        mlm::config::RunConfig config;
        if (!config_options.load(config)) return mlm::kExitOk;  // --print-config
        if (!data_files.empty()) config.data.valid_files = data_files;
        const auto evaluated = mlm::train::evaluate_saved_model(config, checkpoint, ema);
        if (!evaluated.is_main) return mlm::kExitOk;
        const auto& result = evaluated.result;
        if (json) {
          auto out = result.to_json();
          out.update(mlm::train::collapse_report(result));
          if (evaluated.step) out["step"] = *evaluated.step;
          std::cout << out.dump() << std::endl;
        } else {
          std::cout << "checkpoint        " << checkpoint << (ema ? " (EMA weights)" : "") << "\n"
                    << "masked accuracy   " << fmt::format("{:.4f}", result.masked_accuracy())
                    << fmt::format(" (unigram baseline {:.4f})", result.unigram_accuracy()) << "\n"
                    << "mlm loss          " << fmt::format("{:.4f}", result.mlm_loss()) << "\n"
                    << "perplexity        " << fmt::format("{:.2f}", result.perplexity()) << "\n"
                    << "masked tokens     " << result.num_masked << " in " << result.sequences
                    << " sequences\n";
          if (result.num_sentence_pairs > 0) {
            std::cout << "sentence pairs    " << fmt::format("{:.4f}", result.nsp_accuracy())
                      << " accuracy over " << result.num_sentence_pairs << "\n";
          }
          if (result.rtd) {  // ELECTRA: the lines above are the generator's
            const auto& r = result.rtd_counts;
            const auto tokens = static_cast<double>(result.tokens);
            std::cout << "rtd loss          " << fmt::format("{:.4f}", r.loss(tokens)) << " per token over "
                      << result.tokens << " tokens\n"
                      << "rtd accuracy      " << fmt::format("{:.4f}", r.accuracy(tokens)) << "\n"
                      << "rtd replaced P/R/F1 "
                      << fmt::format("{:.4f} / {:.4f} / {:.4f}", r.precision(), r.recall(), r.f1()) << "\n"
                      << "generator sampled the original at "
                      << fmt::format("{:.4f}", r.generator_accuracy(static_cast<double>(result.num_masked)))
                      << " of masked positions\n";
          }
          // The collapse signs training warns of (mlm/train/loop/collapse_watch.h).
          std::string signs;
          if (const auto cls = result.rtd ? mlm::train::one_class(result.rtd_counts, static_cast<double>(result.tokens))
                                          : std::nullopt) {
            signs = "the discriminator calls every token " + *cls;
          }
          if (mlm::train::at_unigram_baseline(result)) {
            signs += (signs.empty() ? "" : "; ") +
                     fmt::format("masked accuracy at the unigram baseline (below {}x)",
                                 mlm::train::kUnigramBaselineMargin);
          }
          std::cout << "collapse          " << (signs.empty() ? "none seen" : signs) << "\n";
        }
        return mlm::kExitOk;
      },
      mlm::cli::libtorch_runtime());
}
