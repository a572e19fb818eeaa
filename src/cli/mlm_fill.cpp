// mlm-fill: the top-k predictions for each [MASK] in a few texts, from a checkpoint or an
// exported (Hugging Face format) model directory.
//   mlm-fill --checkpoint DIR [--top-k 5] [--json] "text with [MASK]"...
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/tools/commands.h"
#include "mlm/util/errors.h"

int main(int argc, char** argv) {
  std::string checkpoint;
  std::vector<std::string> texts;
  int64_t top_k = 5;
  bool json = false;
  return mlm::cli::run_main(
      "mlm-fill", "Predict the tokens behind each [MASK] of the given texts.", argc, argv,
      [&](CLI::App& app) {
        app.add_option("--checkpoint", checkpoint,
                       "A checkpoint directory or an exported (Hugging Face) model directory")
            ->required();
        app.add_option("--top-k", top_k, "Predictions per mask")->check(CLI::PositiveNumber);
        app.add_flag("--json", json, "Print one JSON object per text");
        app.add_option("texts", texts, "Texts with one or more [MASK]")->required();
      },
      [&]() -> int {
        for (const auto& filled : mlm::train::fill_masks(checkpoint, texts, top_k)) {
          if (json) {
            auto masks = nlohmann::json::array();
            for (const auto& predictions : filled.masks) {
              auto row = nlohmann::json::array();
              for (const auto& p : predictions)
                row.push_back({{"token", p.token_id}, {"token_str", p.token}, {"score", p.score}});
              masks.push_back(row);
            }
            std::cout << nlohmann::json{{"text", filled.text}, {"masks", masks}}.dump() << "\n";
            continue;
          }
          std::cout << filled.text << "\n";
          for (size_t m = 0; m < filled.masks.size(); ++m) {
            std::cout << fmt::format("  [MASK] {}:", m + 1);
            for (const auto& p : filled.masks[m]) std::cout << fmt::format("  {} ({:.3f})", p.token, p.score);
            std::cout << "\n";
          }
        }
        return mlm::kExitOk;
      },
      mlm::cli::libtorch_runtime());
}
