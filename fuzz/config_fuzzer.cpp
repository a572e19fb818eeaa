// libFuzzer target: the YAML config loader on arbitrary bytes. Only mlm::ConfigError may
// escape (anything else ends the process and is reported as a crash), and a config that loads
// must survive dump -> load unchanged (the resolved config written into every run and
// checkpoint is read back on resume).
//
// Input: if the first byte is odd, the rest up to the first newline is one `--set` override
// applied to a fixed valid config (fuzzes the override parser); otherwise the whole input is
// the YAML file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mlm/config/config_loader.h"
#include "mlm/util/errors.h"

namespace {

const char* const kBase =
    "model:\n  hidden_size: 64\n  num_attention_heads: 2\n"
    "data:\n  train_files: [a.txt]\n"
    "train:\n  max_steps: 10\n";

void check_round_trip(const mlm::config::RunConfig& config) {
  const std::string dumped = mlm::config::dump_config(config);
  std::string again;
  try {
    again = mlm::config::dump_config(mlm::config::load_config_from_string(dumped, "<dump>"));
  } catch (const mlm::ConfigError& e) {
    std::fprintf(stderr, "dumped config does not load: %s\n--- dump ---\n%s\n", e.what(),
                 dumped.c_str());
    std::abort();
  }
  if (again != dumped) {
    std::fprintf(stderr, "dump -> load -> dump changed the config\n--- first ---\n%s\n"
                         "--- second ---\n%s\n", dumped.c_str(), again.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    if (!input.empty() && (static_cast<unsigned char>(input[0]) & 1)) {
      const std::string override_text = input.substr(1, input.find('\n', 1) - 1);
      check_round_trip(mlm::config::load_config_from_string(kBase, "<base>", {override_text}));
    } else {
      check_round_trip(mlm::config::load_config_from_string(input, "<fuzz>"));
    }
  } catch (const mlm::ConfigError&) {
    // the one allowed outcome for bad input
  }
  return 0;
}
