#include "mlm/train/merge/merge_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "mlm/train/merge/merge_eval.h"
#include "mlm/train/merge/merge_inputs.h"
#include "mlm/train/merge/merge_network.h"
#include "mlm/util/atomic_file.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "mlm/util/proc_stats.h"

namespace fs = std::filesystem;

namespace mlm::train::merge {
namespace {

// The temporary directory beside the output: removed, with whatever it holds, on every way out
// but the rename that publishes the result.
class Staging {
 public:
  explicit Staging(const fs::path& output) {
    const auto parent = output.parent_path().empty() ? fs::path(".") : output.parent_path();
    std::error_code ec;
    fs::create_directories(parent, ec);
    path_ = parent / fmt::format(".{}.merge-tmp-{}", output.filename().string(), ::getpid());
    fs::remove_all(path_, ec);
    if (!fs::create_directories(path_, ec) || ec)
      throw UsageError("--output " + output.string() + ": cannot create " + path_.string() +
                       (ec ? ": " + ec.message() : ""));
  }
  ~Staging() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void require_new_output(const fs::path& output) {
  if (output.empty()) throw UsageError("--output: a directory to create is needed");
  std::error_code ec;
  if (fs::exists(output, ec) && !(fs::is_directory(output) && fs::is_empty(output)))
    throw UsageError("--output " + output.string() + ": exists and is not an empty directory");
}

nlohmann::json spec_json(const MergeSpec& spec, const ResolvedInputs& inputs) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : inputs.models) {
    nlohmann::json j = {{"model", m.label}, {"weight", m.weight}};
    if (spec.method == Method::ties) j["density"] = m.density;
    models.push_back(j);
  }
  nlohmann::json j = {{"merge_method", to_string(spec.method)}, {"models", models}};
  if (inputs.base) j["base_model"] = inputs.base->label;
  if (spec.t) j["t"] = *spec.t;
  if (spec.method != Method::slerp) j["normalize"] = spec.normalize.value_or(spec.method != Method::task_arithmetic);
  if (spec.method == Method::task_arithmetic || spec.method == Method::ties) j["lambda"] = spec.lambda;
  if (spec.method == Method::ties) j["rescale"] = spec.rescale;
  if (inputs.networks.size() > 1 || inputs.networks.front() == "discriminator")
    j["pair"] = inputs.networks.size() > 1 ? "whole" : "discriminator";
  return j;
}

}  // namespace

nlohmann::json run_merge(const MergeRequest& request) {
  const auto& spec = request.spec;
  validate(spec);
  const fs::path output = request.output;
  require_new_output(output);
  if (request.eval_config && spec.pair == PairPart::discriminator)
    throw UsageError("--eval scores masked-LM models: merge the whole pair (pair: whole) to score it");
  const auto start = std::chrono::steady_clock::now();

  nlohmann::json report;
  std::vector<std::pair<std::string, fs::path>> scored;
  {
    Staging staging(output);
    const auto inputs = resolve_inputs(spec, staging.path());
    const auto result = staging.path() / "result";
    int64_t tensors = 0, copied = 0;
    for (const auto& network : inputs.networks) {
      // The discriminators alone make one model directory; a whole pair keeps its layout.
      const auto out_dir = inputs.networks.size() == 1 ? result : result / network;
      const auto stats = merge_network(spec, inputs, network, out_dir, request.format);
      tensors += stats.tensors;
      copied += stats.copied;
    }
    report["merge"] = spec_json(spec, inputs);
    write_file_atomically(result / "mlm_merge.json", report["merge"].dump(2) + "\n");

    std::error_code ec;
    if (fs::exists(output)) fs::remove(output, ec);  // the empty directory it may be
    fs::rename(result, output, ec);
    if (ec) throw UsageError("--output " + output.string() + ": cannot rename " + result.string() + ": " + ec.message());
    report["output"] = output.string();
    report["tensors_merged"] = tensors;
    report["tensors_copied"] = copied;
    if (inputs.base && spec.method != Method::slerp) scored.emplace_back("base " + inputs.base->label, inputs.base->source);
    for (const auto& m : inputs.models)
      if (!inputs.base || spec.method == Method::slerp || fs::weakly_canonical(m.source) != fs::weakly_canonical(inputs.base->source))
        scored.emplace_back(m.label, m.source);
  }
  report["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report["peak_rss_bytes"] = peak_rss_bytes();
  log::info("merge", "{}: {} tensors merged in {:.1f} s, peak RSS {:.0f} MiB", output.string(),
            report["tensors_merged"].get<int64_t>(), report["seconds"].get<double>(),
            static_cast<double>(peak_rss_bytes()) / (1 << 20));

  if (request.eval_config) {
    scored.emplace_back("merged " + output.string(), output);
    report["eval"] = score_models(*request.eval_config, scored);
    std::cout << format_score_table(report["eval"]);
    write_file_atomically(output / "mlm_merge_eval.json", report["eval"].dump(2) + "\n");
  }
  return report;
}

}  // namespace mlm::train::merge
