// mlm-eval: masked-token accuracy, MLM loss and perplexity of a checkpoint or an exported
// (Hugging Face format) model directory on the validation split (or on --data files).
//   mlm-eval --config F --checkpoint DIR [--data FILE]... [--json]
// Pseudo-log-likelihood (no --config needed; mlm/train/tools/pll_command.h):
//   mlm-eval --checkpoint DIR --pll FILE [--minimal-pairs FILE] [--variant V] [--max N] [--threads N] [--json]
#include <fmt/format.h>

#include <iostream>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/loop/collapse_watch.h"
#include "mlm/train/tools/commands.h"
#include "mlm/train/tools/pll_command.h"
#include "mlm/util/errors.h"

namespace {

int print_likelihood(const nlohmann::json& report, bool json) {
  if (json) {
    std::cout << report.dump() << std::endl;
    return mlm::kExitOk;
  }
  std::cout << "checkpoint        " << report["checkpoint"].get<std::string>() << "\n";
  if (report.contains("pll")) {
    const auto& r = report["pll"];
    std::cout << "line\tpll\ttokens\n";
    for (const auto& s : r["scores"])
      std::cout << s["line"].get<int64_t>() << "\t" << fmt::format("{:.4f}", s["pll"].get<double>()) << "\t"
                << s["tokens"].get<int64_t>() << "\n";
    std::cout << "variant           " << r["variant"].get<std::string>() << "\n"
              << "pseudo-perplexity " << fmt::format("{:.3f}", r["pseudo_perplexity"].get<double>()) << " over "
              << r["tokens"].get<int64_t>() << " tokens in " << r["sentences"].get<int64_t>() << " sentences ("
              << fmt::format("{:.1f}", r["sentences_per_s"].get<double>()) << " sentences/s)\n";
  }
  if (report.contains("minimal_pairs")) {
    const auto& r = report["minimal_pairs"];
    std::cout << "minimal pairs     " << fmt::format("{:.4f}", r["accuracy"].get<double>()) << " accuracy over "
              << r["pairs"].get<int64_t>() << " pairs (" << r["variant"].get<std::string>() << ")\n";
    for (const auto& [name, p] : r["phenomena"].items())
      std::cout << "  " << name << "  " << fmt::format("{:.4f}", p["accuracy"].get<double>()) << " over "
                << p["pairs"].get<int64_t>() << "\n";
  }
  return mlm::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  mlm::cli::ConfigOptions config_options;
  std::string checkpoint;
  std::vector<std::string> data_files;
  bool json = false, ema = false;
  mlm::train::PllRequest pll;
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
        app.add_option("--pll", pll.sentences_file,
                       "Pseudo-log-likelihood of each sentence of FILE (one per line, or .jsonl with a "
                       "\"sentence\" or \"text\" field) and the pseudo-perplexity");
        app.add_option("--minimal-pairs", pll.minimal_pairs_file,
                       "Minimal-pair accuracy on FILE (.jsonl: sentence_good, sentence_bad[, phenomenon])");
        app.add_option("--variant", pll.variant, "original or within_word_l2r (Kauf & Ivanova 2023)")
            ->check(CLI::IsMember({"original", "within_word_l2r"}));
        app.add_option("--max", pll.max_items, "Score the first N sentences / pairs of each file (0 = all)")
            ->check(CLI::NonNegativeNumber);
        app.add_option("--threads", pll.threads, "Intra-op threads of the likelihood modes (0 = the cores)")
            ->check(CLI::NonNegativeNumber);
        app.get_option("--config")->required(false);  // the likelihood modes need none
        app.add_flag("--ema", ema, "Evaluate the checkpoint's EMA of the weights (ema.pt, train.ema_decay)");
      },
      [&]() -> int {
        mlm::config::RunConfig config;
        const bool likelihood = !pll.sentences_file.empty() || !pll.minimal_pairs_file.empty();
        if (config_options.path.empty() && !likelihood)
          throw mlm::UsageError("--config is required (except with --pll / --minimal-pairs)");
        if (!config_options.path.empty() && !config_options.load(config)) return mlm::kExitOk;  // --print-config
        if (likelihood) return print_likelihood(mlm::train::score_pseudo_likelihood(config, checkpoint, pll), json);
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
