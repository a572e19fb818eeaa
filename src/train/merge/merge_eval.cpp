#include "mlm/train/merge/merge_eval.h"

#include <fmt/format.h>

#include "mlm/train/finetune/probes.h"
#include "mlm/train/tools/commands.h"
#include "mlm/train/checkpoint/saved_model.h"
#include "mlm/util/logging.h"

namespace mlm::train::merge {
namespace {

nlohmann::json probe_json(const ProbeScore& p) {
  nlohmann::json j = {{"task", p.task}, {"metric", p.metric}, {"suite", p.suite},
                      {"validation", p.validation}, {"validation_std", p.validation_std},
                      {"validation_per_seed", p.validation_per_seed}};
  if (p.test) {
    j["test"] = *p.test;
    j["test_std"] = p.test_std.value_or(0.0);
    j["test_per_seed"] = p.test_per_seed;
  }
  return j;
}

}  // namespace

nlohmann::json score_models(const config::RunConfig& config,
                            const std::vector<std::pair<std::string, std::filesystem::path>>& models) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [label, dir] : models) {
    log::info("merge", "scoring {}", label);
    const auto evaluated = evaluate_saved_model(config, dir);
    nlohmann::json row = {{"model", label}};
    row.update(evaluated.result.to_json());
    if (!config.eval.probes.empty()) {
      auto saved = open_saved_model(dir, config);
      finetune::Probes probes(config.eval.probes, saved.model->max_sequence_length());
      row["probes"] = nlohmann::json::array();
      for (const auto& score : probes.run(saved.model, saved.tokenizer, torch::kCPU, torch::kFloat32))
        row["probes"].push_back(probe_json(score));
    }
    rows.push_back(row);
  }
  return rows;
}

std::string format_score_table(const nlohmann::json& rows) {
  // The probe columns: each task (or suite average) the first row reports.
  std::vector<std::string> probe_names;
  if (!rows.empty() && rows[0].contains("probes"))
    for (const auto& p : rows[0]["probes"]) probe_names.push_back(p["task"].get<std::string>());
  size_t width = 5;
  for (const auto& r : rows) width = std::max(width, r["model"].get<std::string>().size());
  std::string out = fmt::format("{:<{}}  {:>8}  {:>8}", "model", width, "mask_acc", "mlm_loss");
  for (const auto& name : probe_names) out += fmt::format("  {:>19}", name.substr(0, 19));
  out += "\n";
  for (const auto& r : rows) {
    out += fmt::format("{:<{}}  {:>8.4f}  {:>8.4f}", r["model"].get<std::string>(), width,
                       r["masked_accuracy"].get<double>(), r["mlm_loss"].get<double>());
    if (r.contains("probes"))
      for (const auto& p : r["probes"])
        out += fmt::format("  {:>10.4f} ± {:<6.4f}", p["validation"].get<double>(), p["validation_std"].get<double>());
    out += "\n";
  }
  return out;
}

}  // namespace mlm::train::merge
