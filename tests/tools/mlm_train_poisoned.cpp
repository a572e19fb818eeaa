// mlm-train-poisoned: mlm-train for the fault suite, with one more option.
//   mlm-train-poisoned --poison-steps N[-M] --config F [--set k=v]... [--resume latest|DIR]
// fills a gradient with NaN at steps N..M (poison_gradient.h), so the tests can watch the
// real executable skip non-finite steps, log them, and give up with its exit code. Built
// with the tests only; mlm-train itself has no such hook.
#include <string>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/config/validate.h"
#include "mlm/train/run/trainer.h"
#include "mlm/util/errors.h"
#include "tools/poison_gradient.h"

int main(int argc, char** argv) {
  mlm::cli::ConfigOptions config_options;
  std::string resume, steps;
  return mlm::cli::run_main(
      "mlm-train-poisoned", "mlm-train with NaN gradients at chosen steps (fault tests)", argc,
      argv,
      [&](CLI::App& app) {
        config_options.add_to(app);
        app.add_option("--resume", resume, "As mlm-train's --resume");
        app.add_option("--poison-steps", steps, "N or N-M: the steps whose gradient is NaN")
            ->required();
      },
      [&]() -> int {
        mlm::config::RunConfig config;
        if (!config_options.load(config)) return mlm::kExitOk;
        const auto dash = steps.find('-');
        int64_t first = 0, last = 0;
        try {
          first = std::stoll(steps.substr(0, dash));
          last = dash == std::string::npos ? first : std::stoll(steps.substr(dash + 1));
        } catch (const std::exception&) {
          throw mlm::UsageError("--poison-steps '" + steps + "': expected N or N-M");
        }
        mlm::config::require_training_data(config);
        mlm::train::Trainer trainer(
            config, {resume, nullptr, mlm::train::testing::poison_gradient_at(first, last)});
        return trainer.run();
      },
      mlm::cli::libtorch_runtime());
}
