#include "cli/common/cli_app.h"

#include <iostream>

#include "mlm/config/config_loader.h"
#include "mlm/text/regex_budget.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "mlm/version.h"

namespace mlm::cli {

void ConfigOptions::add_to(CLI::App& app) {
  app.add_option("--config,-c", path, "YAML run configuration")->required();
  app.add_option("--set", overrides,
                 "Override one key, value parsed as YAML: --set optim.learning_rate=3e-4 "
                 "(repeatable)")
      ->take_all();
  app.add_flag("--print-config", print_config, "Print the resolved configuration and exit");
}

bool ConfigOptions::load(config::RunConfig& out) const {
  out = config::load_config(path, overrides);
  if (print_config) {
    std::cout << config::dump_config(out);
    return false;
  }
  log::set_level(out.logging.level);
  text::set_regex_budget({static_cast<int32_t>(out.tokenizer.regex_step_limit), text::RegexBudget{}.stack_limit_bytes});
  return true;
}

int run_main(const std::string& name, const std::string& description, int argc, char** argv,
             const std::function<void(CLI::App&)>& add_options, const std::function<int()>& body,
             const std::string& runtime) {
  CLI::App app{description, name};
  app.set_version_flag("--version", name + " " + MLM_VERSION + " (" + runtime + ")");
  if (add_options) add_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << name << ": " << e.what() << " (see --help)\n";
    return kExitBadUsage;
  }
  if (!body) {
    std::cerr << name << ": not implemented yet\n";
    return kExitRuntimeFailure;
  }
  try {
    log::set_level("info");
    return body();
  } catch (const ConfigError& e) {
    std::cerr << name << ": config error: " << e.what() << "\n";
    return kExitBadUsage;
  } catch (const UsageError& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return kExitBadUsage;
  } catch (const DataError& e) {
    std::cerr << name << ": data error: " << e.what() << "\n";
    return kExitBadUsage;
  } catch (const CheckpointError& e) {
    std::cerr << name << ": checkpoint error: " << e.what() << "\n";
    return kExitRuntimeFailure;
  } catch (const std::exception& e) {
    // c10::Error carries a backtrace after the first line; the first line is the message.
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    std::cerr << name << ": error: " << what << "\n";
    return kExitRuntimeFailure;
  }
}

}  // namespace mlm::cli
