// mlm-finetune: fine-tunes a checkpoint or an exported (Hugging Face format) model on a labelled
// task (configs/probes/*.yaml) and reports its validation and test scores.
//   mlm-finetune --model DIR --task TASK.yaml [--output DIR] [--json]
#include <fmt/format.h>

#include <iostream>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/tools/commands.h"
#include "mlm/util/errors.h"

int main(int argc, char** argv) {
  std::string model_dir, task_file, output;
  bool json = false;
  return mlm::cli::run_main(
      "mlm-finetune",
      "Fine-tune a checkpoint or an exported model on a labelled task; report its scores.", argc, argv,
      [&](CLI::App& app) {
        app.add_option("--model", model_dir,
                       "A checkpoint directory (runs/x/checkpoints/step_...) or an exported model directory")
            ->required();
        app.add_option("--task", task_file, "The task file (configs/probes/*.yaml)")->required();
        app.add_option("--output", output,
                       "Write the fine-tuned classifier here as a Hugging Face "
                       "...ForSequenceClassification / ...ForTokenClassification directory");
        app.add_flag("--json", json, "Print the whole report (every step's loss, every evaluation) as JSON");
      },
      [&]() -> int {
        std::optional<std::filesystem::path> out;
        if (!output.empty()) out = output;
        const auto report = mlm::train::finetune_saved_model(model_dir, task_file, out);
        if (json) {
          std::cout << report.dump() << std::endl;
          return mlm::kExitOk;
        }
        const std::string metric = report["metric"];
        std::cout << "task              " << report["task"].get<std::string>() << " ("
                  << report["model_class"].get<std::string>() << ")\n"
                  << "steps             " << report["steps_run"].get<int64_t>() << " of "
                  << report["total_steps"].get<int64_t>() << fmt::format(" in {:.1f} s", report["seconds"].get<double>())
                  << "\n";
        for (const auto& e : report["evaluations"])
          std::cout << fmt::format("epoch {:<11.2f} validation {} {:.4f}\n", e["epoch"].get<double>(), metric,
                                   e["validation"][metric].get<double>());
        std::cout << fmt::format("best epoch        {:.2f}: validation {} {:.4f}\n", report["best_epoch"].get<double>(),
                                 metric, report["validation_best"].get<double>());
        if (report.contains("test"))
          std::cout << fmt::format("test              {} {:.4f}\n", metric, report["test"][metric].get<double>());
        const auto& truncated = report["truncated"];
        if (truncated["train"].get<int64_t>() > 0)
          std::cout << "truncated         " << truncated["train"].get<int64_t>() << " training examples to task.max_seq_len\n";
        if (report.contains("output")) std::cout << "written           " << report["output"].get<std::string>() << "\n";
        return mlm::kExitOk;
      },
      mlm::cli::libtorch_runtime());
}
