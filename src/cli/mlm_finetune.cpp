// mlm-finetune: fine-tunes a checkpoint or an exported (Hugging Face format) model on a labelled
// task (configs/probes/*.yaml) and reports its validation and test scores; or on every task of a
// suite over several seeds, reporting each task's mean ± standard deviation and their average.
//   mlm-finetune --model DIR --task TASK.yaml [--output DIR] [--precision P] [--json]
//   mlm-finetune --model DIR --suite SUITE.yaml [--seeds N] [--precision P] [--json]
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/config/suite_config.h"
#include "mlm/train/tools/commands.h"
#include "mlm/util/errors.h"

namespace {

// "0.4123 ± 0.0100" of a spread_json object.
std::string mean_std(const nlohmann::json& s) {
  return fmt::format("{:.4f} ± {:.4f}", s["mean"].get<double>(), s["std"].get<double>());
}

void print_suite(const nlohmann::json& report) {
  const auto seeds = report["seeds"].size();
  const std::string seeds_text = fmt::format("{} seed{}", seeds, seeds == 1 ? "" : "s");
  std::cout << fmt::format("suite             {} ({}, {}, {:.1f} s)\n", report["suite"].get<std::string>(),
                           seeds_text, report["precision"].get<std::string>(), report["seconds"].get<double>());
  size_t width = 17;  // the column of the other reports' labels, wider for a longer task name
  for (const auto& t : report["tasks"]) width = std::max(width, t["task"].get<std::string>().size());
  for (const auto& t : report["tasks"]) {
    std::cout << fmt::format("{:<{}} {:<9} validation {}", t["task"].get<std::string>(), width,
                             t["metric"].get<std::string>(), mean_std(t["validation"]));
    if (t.contains("test")) std::cout << "  test " << mean_std(t["test"]);
    std::cout << "  (" << seeds_text << ")\n";
  }
  const auto& a = report["average"];
  std::cout << fmt::format("{:<{}} {:<9}", "average", width, "");
  // Its spread is over the seeds, of each seed's mean over the tasks.
  const auto average = [&](const std::string& split) {
    return fmt::format("{:.4f} ± {:.4f}", a[split].get<double>(), a[split + "_std"].get<double>());
  };
  if (a.contains("validation")) std::cout << " validation " << average("validation");
  if (a.contains("test")) std::cout << "  test " << average("test");
  std::cout << fmt::format("  (mean of {} tasks' means, std over the {}; mse left out)\n", a["tasks"].get<int64_t>(),
                           seeds_text);
}

void print_task(const nlohmann::json& report) {
  const std::string metric = report["metric"];
  std::cout << "task              " << report["task"].get<std::string>() << " ("
            << report["model_class"].get<std::string>() << ")\n"
            << "steps             " << report["steps_run"].get<int64_t>() << " of "
            << report["total_steps"].get<int64_t>()
            << fmt::format(" in {:.1f} s ({})", report["seconds"].get<double>(), report["precision"].get<std::string>())
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
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir, task_file, suite_file, output, precision = "auto";
  int64_t seeds = 0;
  bool json = false;
  return mlm::cli::run_main(
      "mlm-finetune",
      "Fine-tune a checkpoint or an exported model on a labelled task, or a suite of tasks over several seeds; "
      "report the scores.",
      argc, argv,
      [&](CLI::App& app) {
        app.add_option("--model", model_dir,
                       "A checkpoint directory (runs/x/checkpoints/step_...) or an exported model directory")
            ->required();
        auto* task = app.add_option("--task", task_file, "The task file (configs/probes/*.yaml)");
        auto* suite = app.add_option("--suite", suite_file,
                                     "A suite file (configs/probes/suite.yaml): its tasks over its seeds, "
                                     "mean ± std per task and the average");
        task->excludes(suite);
        app.add_option("--seeds", seeds, "With --suite: the seeds 1..N in place of the suite's")
            ->check(CLI::PositiveNumber)
            ->needs(suite);
        auto* out = app.add_option("--output", output,
                                   "Write the fine-tuned classifier here as a Hugging Face "
                                   "...ForSequenceClassification / ...ForTokenClassification directory");
        out->excludes(suite);
        app.add_option("--precision", precision,
                       "auto (bf16 autocast where the CPU has AVX512-BF16), fp32 or bf16, as train.precision")
            ->check(CLI::IsMember({"auto", "fp32", "bf16"}));
        app.add_flag("--json", json, "Print the whole report (every step's loss, every evaluation) as JSON");
      },
      [&]() -> int {
        if (task_file.empty() && suite_file.empty()) throw mlm::UsageError("one of --task and --suite is required");
        const auto p = precision == "bf16"   ? mlm::config::Precision::bf16
                       : precision == "fp32" ? mlm::config::Precision::fp32
                                             : mlm::config::Precision::auto_detect;
        nlohmann::json report;
        if (!suite_file.empty()) {
          report = mlm::train::finetune_suite(model_dir, suite_file,
                                              seeds > 0 ? mlm::config::first_seeds(seeds) : std::vector<int64_t>{}, p);
        } else {
          std::optional<std::filesystem::path> out;
          if (!output.empty()) out = output;
          report = mlm::train::finetune_saved_model(model_dir, task_file, out, p);
        }
        if (json) {
          std::cout << report.dump() << std::endl;
        } else if (!suite_file.empty()) {
          print_suite(report);
        } else {
          print_task(report);
        }
        return mlm::kExitOk;
      },
      mlm::cli::libtorch_runtime());
}
