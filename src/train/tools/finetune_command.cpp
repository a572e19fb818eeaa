// mlm-finetune: a pretrained model (checkpoint or Hugging Face directory) fine-tuned on a
// labelled task, its scores reported and, when asked, the classifier exported.
#include <torch/torch.h>

#include <chrono>
#include <filesystem>

#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/text/hf/hf_tokenizer_files.h"
#include "mlm/train/finetune/finetune.h"
#include "mlm/train/finetune/probes.h"
#include "mlm/train/run/device.h"
#include "mlm/train/tools/commands.h"
#include "mlm/train/checkpoint/saved_model.h"
#include "mlm/util/errors.h"

namespace mlm::train {
namespace fs = std::filesystem;
using namespace finetune;

namespace {

nlohmann::json scores_json(const TaskScores& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : s.all) j[name] = value;
  return j;
}

// config.json of the classifier: the encoder's, named as the classification class, with the
// label names transformers' pipelines show.
nlohmann::json classifier_config_json(Classifier& classifier, const config::TaskSection& task) {
  auto j = model::hf_config_json(classifier->encoder);
  j["architectures"] = {classifier->hf_class()};
  nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
  // Regression has one output and no label set: transformers' default name for it.
  const auto labels = task.kind == config::TaskKind::regression ? std::vector<std::string>{"LABEL_0"} : task.labels;
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label[std::to_string(i)] = labels[i];
    label2id[labels[i]] = static_cast<int64_t>(i);
  }
  j["id2label"] = id2label;
  j["label2id"] = label2id;
  if (task.kind == config::TaskKind::sequence_classification) j["problem_type"] = "single_label_classification";
  if (task.kind == config::TaskKind::regression) j["problem_type"] = "regression";
  return j;
}

}  // namespace

nlohmann::json finetune_saved_model(const fs::path& model_dir, const std::string& task_file,
                                    const std::optional<fs::path>& output, config::Precision precision) {
  const auto task_config = config::load_task_config(task_file);
  const auto& task = task_config.task;
  model::TensorDict file_weights;
  auto saved = open_saved_encoder(model_dir, config::RunConfig{}, file_weights);
  require_fits(task_config, saved.model->max_sequence_length());
  const auto reading = std::chrono::steady_clock::now();
  const auto splits = load_task_splits(task_config, saved.tokenizer);
  const double tokenize_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - reading).count();

  auto classifier = make_classifier(saved.model, task_config);
  const bool continued = !file_weights.empty() && classifier->load_head(file_weights);
  const torch::Device device(torch::kCPU);
  const auto dtype = compute_dtype(precision, device);
  const auto result = run_finetune(classifier, task_config, splits, saved.tokenizer.vocab().ids.pad, device, dtype);

  nlohmann::json report = {{"task", task.name},
                           {"kind", config::to_string(task.kind)},
                           {"model_dir", model_dir.string()},
                           {"model_class", classifier->hf_class()},
                           {"head", continued ? "loaded" : "initialised"},
                           {"metric", config::to_string(task.metric)},
                           {"train_examples", splits.train.examples.size()},
                           {"truncated", {{"train", splits.train.truncated}, {"validation", splits.validation.truncated}}},
                           {"batch_size", task_config.finetune.batch_size},
                           {"total_steps", result.total_steps},
                           {"warmup_steps", result.warmup_steps},
                           {"steps_run", result.steps},
                           {"precision", precision_name(dtype)},
                           {"seconds", result.seconds},
                           {"tokenize_seconds", tokenize_seconds},
                           {"eval_seconds", result.eval_seconds},
                           {"losses", result.losses},
                           {"learning_rates", result.learning_rates},
                           {"grad_norms", result.grad_norms},
                           {"best_epoch", result.best_epoch},
                           {"validation_best", result.best_validation}};
  auto evaluations = nlohmann::json::array();
  for (const auto& e : result.evaluations)
    evaluations.push_back({{"epoch", e.epoch}, {"step", e.step}, {"validation", scores_json(e.validation)}});
  report["evaluations"] = evaluations;
  if (result.test) {
    report["test"] = scores_json(*result.test);
    report["truncated"]["test"] = splits.test->truncated;
  }
  if (output) {
    model::write_hf_files(output->string(), classifier_config_json(classifier, task), classifier->hf_state_dict(),
                          model::WeightFormat::safetensors);
    text::write_hf_tokenizer(saved.tokenizer, output->string(), saved.model->max_sequence_length());
    report["output"] = output->string();
  }
  return report;
}

}  // namespace mlm::train
