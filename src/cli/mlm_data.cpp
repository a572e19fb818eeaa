// mlm-data: not implemented yet (its issue fills it in).
#include "cli/common/cli_app.h"

int main(int argc, char** argv) {
  return mlm::cli::run_main("mlm-data", "mlm-data (not implemented yet)", argc, argv, nullptr, nullptr);
}
