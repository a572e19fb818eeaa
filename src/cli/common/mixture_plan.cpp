#include "cli/common/mixture_plan.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "mlm/config/data_plan.h"
#include "mlm/config/phases.h"
#include "mlm/config/source_weights.h"
#include "mlm/data/mixture/mixture_source.h"
#include "mlm/data/mixture/mixture_weights.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/errors.h"

namespace mlm::cli {

int plan_command(const config::RunConfig& config, int world_size, bool json) {
  if (config.data.sources.empty()) {
    throw UsageError("--plan: data.sources is empty: the plan is of a mixture of sources");
  }
  const auto tokenizer = text::load_or_train_tokenizer(config.tokenizer, config.data);
  const auto sizes = data::source_token_counts(config::resolve_data_plan(config), tokenizer);
  for (int64_t p = 0; p < config::phase_count(config); ++p) {
    const auto phase = config::phase_config(config, p);
    const auto plan = config::resolve_data_plan(phase);
    const auto base = config::source_base_weights(phase.data);
    const auto weights = data::tempered_weights(base, sizes, phase.data.temperature);
    const auto cumulative = data::cumulative_weights(weights);
    // The positions the phase's stream draws: its steps times its global batch.
    const int64_t positions = config::phase_steps(config, p, world_size) * plan.step_sequences * world_size;
    std::vector<int64_t> drawn(weights.size(), 0);
    for (int64_t g = 0; g < positions; ++g) ++drawn[data::mixture_draw(plan.seed, g, cumulative)];

    const std::string name = config::phase_name(config, p);
    nlohmann::json sources = nlohmann::json::array();
    if (!json) {
      std::cout << fmt::format("phase {}{}: {} positions, temperature {}\n", p,
                               name.empty() ? "" : " '" + name + "'", positions, phase.data.temperature);
      std::cout << fmt::format("  {:<16} {:>14} {:>8} {:>8} {:>9}\n", "source", "tokens", "weight",
                               "target", "realised");
    }
    for (size_t s = 0; s < weights.size(); ++s) {
      const double target = weights[s] / cumulative.back();
      const double realised = positions > 0 ? static_cast<double>(drawn[s]) / static_cast<double>(positions) : 0.0;
      const std::string source = config::source_name(phase.data, s);
      if (json) {
        sources.push_back({{"source", source}, {"tokens", sizes[s]}, {"weight", base[s]},
                           {"target", target}, {"realised", realised}, {"positions", drawn[s]}});
      } else {
        std::cout << fmt::format("  {:<16} {:>14} {:>8.4g} {:>8.4f} {:>9.4f}\n", source, sizes[s], base[s],
                                 target, realised);
      }
    }
    if (json) {
      std::cout << nlohmann::json{{"phase", p}, {"name", name}, {"positions", positions},
                                  {"temperature", phase.data.temperature}, {"sources", sources}}
                       .dump()
                << "\n";
    }
  }
  std::cout.flush();
  return 0;
}

}  // namespace mlm::cli
