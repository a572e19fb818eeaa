// mlm-merge: checkpoints or Hugging Face directories of one architecture, shape and tokenizer
// merged into a Hugging Face directory (average, task_arithmetic, ties, slerp), optionally each
// input and the result scored.
//   mlm-merge --model A --model B [--weight 0.5 --weight 0.5] --output OUT
//   mlm-merge --model runs/x --last 5 --output OUT          (the run's last 5 checkpoints)
//   mlm-merge --method ties --base B --model A --model C --density 0.5 --output OUT
//   mlm-merge --config merge.yaml --output OUT [--eval configs/mini.yaml]
#include <fmt/format.h>

#include <filesystem>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/merge/merge_command.h"
#include "mlm/util/errors.h"

int main(int argc, char** argv) {
  std::string config_file, method = "average", base, output, weights_format = "safetensors", pair = "whole";
  std::vector<std::string> models, eval_overrides;
  std::vector<double> weights, densities;
  std::optional<double> t, lambda;
  std::optional<bool> normalize;
  bool rescale = false;
  int64_t last = 0;
  std::string eval_config;
  return mlm::cli::run_main(
      "mlm-merge",
      "Average or merge checkpoints / Hugging Face models of one architecture, shape and tokenizer "
      "(average, task_arithmetic, ties, slerp) into a Hugging Face directory",
      argc, argv,
      [&](CLI::App& app) {
        app.add_option("--config", config_file, "A mergekit-style YAML file (models, base_model, merge_method, "
                                                 "parameters); replaces the method and model flags");
        app.add_option("--method", method, "average (= linear), task_arithmetic, ties or slerp");
        app.add_option("--model", models, "A model: a checkpoint, a Hugging Face directory, or a run directory "
                                          "(with --last)");
        app.add_option("--weight", weights, "One weight per --model (default 1 each)");
        app.add_option("--density", densities, "ties: one density in (0, 1] per --model (default 1)");
        app.add_option("--base", base, "The base model (task_arithmetic, ties; slerp: the model t = 0 gives)");
        app.add_option("--t", t, "slerp: the interpolation factor in [0, 1]");
        app.add_option("--normalize", normalize, "Divide by the weights' sum (default true, task_arithmetic false)");
        app.add_option("--lambda", lambda, "task_arithmetic, ties: scale of the merged delta (default 1)");
        app.add_flag("--rescale", rescale, "ties: rescale each trimmed delta to its L1 norm");
        app.add_option("--last", last, "Each run directory given as --model stands for its last N complete "
                                       "checkpoints (fairseq's --num-update-checkpoints)");
        app.add_option("--pair", pair, "A generator/discriminator pair: merge the whole pair, or the discriminators "
                                       "alone into one model directory")
            ->check(CLI::IsMember({"whole", "discriminator"}));
        app.add_option("--output", output, "The new directory to write (must not exist, or be empty)")->required();
        app.add_option("--weights", weights_format, "Weight file format: safetensors or bin")
            ->check(CLI::IsMember({"safetensors", "bin"}));
        app.add_option("--eval", eval_config, "Score each input and the result on this run config's validation "
                                              "split (and eval.probes); the table goes to OUTPUT/mlm_merge_eval.json");
        app.add_option("--set", eval_overrides, "key=value overrides of the --eval config");
      },
      [&]() -> int {
        using namespace mlm::train::merge;
        MergeRequest request;
        auto& spec = request.spec;
        if (!config_file.empty()) {
          if (!models.empty() || !weights.empty() || !densities.empty() || !base.empty() || t || normalize ||
              lambda || rescale)
            throw mlm::UsageError("--config " + config_file + ": give the models and parameters in the file, "
                                  "not also as flags");
          spec = read_merge_yaml(config_file);
        } else {
          spec.origin = "the command line";
          spec.method = parse_method(method);
          if (!weights.empty() && weights.size() != models.size())
            throw mlm::UsageError(fmt::format("--weight: {} given for {} --model", weights.size(), models.size()));
          if (!densities.empty() && densities.size() != models.size())
            throw mlm::UsageError(fmt::format("--density: {} given for {} --model", densities.size(), models.size()));
          for (size_t i = 0; i < models.size(); ++i) {
            ModelEntry entry{models[i], std::nullopt, std::nullopt, 0};
            if (!weights.empty()) entry.weight = weights[i];
            if (!densities.empty()) entry.density = densities[i];
            spec.models.push_back(entry);
          }
          spec.base_model = base;
          spec.t = t;
          spec.normalize = normalize;
          spec.lambda = lambda.value_or(1.0);
          spec.rescale = rescale;
          spec.pair = pair == "whole" ? PairPart::whole : PairPart::discriminator;
        }
        if (last > 0)  // the run directories among the models
          for (auto& entry : spec.models)
            if (std::filesystem::is_directory(std::filesystem::path(entry.path) / "checkpoints")) entry.last = last;
        request.output = output;
        request.format = weights_format == "bin" ? mlm::model::WeightFormat::bin : mlm::model::WeightFormat::safetensors;
        if (!eval_config.empty()) {
          mlm::cli::ConfigOptions options;
          options.path = eval_config;
          options.overrides = eval_overrides;
          mlm::config::RunConfig config;
          options.load(config);
          request.eval_config = config;
        }
        run_merge(request);
        return mlm::kExitOk;
      },
      mlm::cli::libtorch_runtime());
}
