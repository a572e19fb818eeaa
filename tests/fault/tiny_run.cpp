#include "tiny_run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "mlm/model/hf/tensor_file.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/run/trainer.h"

namespace mlm::fault {

std::string shared_tiny_tokenizer() {
  // Keyed by the executable's mtime: a rebuilt tokenizer gets a fresh cache entry.
  struct stat info {};
  const std::string binary = tool_path("train");
  if (stat(binary.c_str(), &info) != 0) return "";
  const fs::path cache_dir = fs::path(MLM_BINARY_DIR) / "fault_cache";
  const fs::path model =
      cache_dir / ("spm_tiny_" + std::to_string(static_cast<long long>(info.st_mtime)) + ".model");
  if (fs::exists(model)) return model.string();
  fs::create_directories(cache_dir);

  ScratchDir scratch("tokenizer");
  const std::string trained = (scratch / "spm.model").string();
  const auto result = run_tool(
      "train",
      {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml", "--set",
       "train.output_dir=" + (scratch / "run").string(), "--set", "tokenizer.model=" + trained,
       "--set", "data.train_files=[" + std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt]",
       "--set", "data.valid_files=[" + std::string(MLM_FIXTURES_DIR) + "/corpus/valid.txt]",
       "--set", "train.max_steps=1", "--set", "eval.max_batches=1"},
      scratch.path(), 300);
  if (result.exit_code != 0 || !fs::exists(trained)) {
    ADD_FAILURE() << "training the shared tiny tokenizer failed: " << result.status() << "\n"
                  << result.err;
    return "";
  }
  // Publish atomically: concurrent test processes may race here, each rename is whole.
  const fs::path tmp = model.string() + ".tmp" + std::to_string(getpid());
  fs::copy_file(trained, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, model);
  return model.string();
}

TinyRun::TinyRun(fs::path root_dir, std::vector<std::string> extra) : root(std::move(root_dir)) {
  fs::create_directories(root);  // the child process starts in it
  const std::string fixtures = MLM_FIXTURES_DIR;
  settings = {"train.output_dir=" + run_dir().string(),
              "tokenizer.model=" + shared_tiny_tokenizer(),
              "tokenizer.train_if_missing=false",
              "data.train_files=[" + fixtures + "/corpus/train.txt]",
              "data.valid_files=[" + fixtures + "/corpus/valid.txt]",
              "train.threads=1",
              "logging.every_steps=1",
              "logging.progress_bar=off",
              "eval.every_steps=0",
              "eval.max_batches=2"};
  settings.insert(settings.end(), extra.begin(), extra.end());
}

fs::path TinyRun::checkpoint(int64_t step) const {
  return checkpoints() / train::checkpoint_dir_name(step);
}

ChildOptions TinyRun::command(const std::vector<std::string>& extra_args, double timeout_s) const {
  ChildOptions options;
  options.argv = {tool_path(tool), "--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  for (const auto& setting : settings) {
    options.argv.push_back("--set");
    options.argv.push_back(setting);
  }
  options.argv.insert(options.argv.end(), extra_args.begin(), extra_args.end());
  options.cwd = root.string();
  options.timeout_s = timeout_s;
  return options;
}

ChildResult TinyRun::run(const std::vector<std::string>& extra_args,
                         const std::vector<std::pair<std::string, std::string>>& env,
                         double timeout_s) const {
  auto options = command(extra_args, timeout_s);
  options.env = env;
  return run_child(options);
}

Metrics read_metrics(const fs::path& run_dir) {
  Metrics metrics;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded() || !row.is_object() || !row.contains("step")) {
      metrics.bad_lines.push_back(line);
      continue;
    }
    const int64_t step = row["step"].get<int64_t>();
    (row.contains("loss") ? metrics.train : metrics.eval)[step] = row;
  }
  return metrics;
}

int64_t last_logged_step(const fs::path& run_dir) {
  std::ifstream in(run_dir / "metrics.jsonl");
  int64_t last = 0;
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line, nullptr, false);
    if (!row.is_discarded() && row.is_object() && row.contains("loss") && row.contains("step")) {
      last = std::max(last, row["step"].get<int64_t>());
    }
  }
  return last;
}

std::vector<std::string> complete_checkpoints(const fs::path& checkpoints_dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!train::parse_checkpoint_step(name)) continue;
    try {
      train::verify_checkpoint_dir(entry.path(), train::checkpoint_required_files());
      names.push_back(name);
    } catch (const std::exception&) {
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string compare_weights(const fs::path& a, const fs::path& b) {
  const auto want = model::read_tensor_file(a.string());
  const auto got = model::read_tensor_file(b.string());
  if (want.size() != got.size()) {
    return std::to_string(want.size()) + " tensors vs " + std::to_string(got.size());
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].first != got[i].first) return "name " + want[i].first + " vs " + got[i].first;
    if (!want[i].second.sizes().equals(got[i].second.sizes()) ||
        !torch::equal(want[i].second, got[i].second)) {
      const double diff =
          (want[i].second - got[i].second).abs().max().item<double>();
      std::ostringstream text;
      text << want[i].first << " differs (max abs difference " << diff << ")";
      return text.str();
    }
  }
  return "";
}

std::string compare_train_rows(const Metrics& want, const Metrics& got) {
  static const char* const kKeys[] = {"tokens", "loss", "mlm_accuracy", "lr", "grad_norm"};
  for (const auto& [step, row] : want.train) {
    const auto it = got.train.find(step);
    if (it == got.train.end()) return "no train row for step " + std::to_string(step);
    for (const char* key : kKeys) {
      if (row.value(key, nlohmann::json()) != it->second.value(key, nlohmann::json())) {
        return "step " + std::to_string(step) + ": " + key + " " + row.value(key, nlohmann::json()).dump() +
               " (uninterrupted) vs " + it->second.value(key, nlohmann::json()).dump();
      }
    }
  }
  if (got.train.size() != want.train.size()) {
    return std::to_string(got.train.size()) + " train rows, expected " +
           std::to_string(want.train.size());
  }
  return "";
}

}  // namespace mlm::fault
