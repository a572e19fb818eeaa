#include "mlm/config/task_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "field_codec.h"
#include "key_suggest.h"
#include "struct_list.h"
#include "mlm/util/errors.h"

namespace mlm::config {

namespace {

using detail::describe;

std::string at_mark(const std::string& origin, const YAML::Mark& mark) {
  return mark.is_null() ? origin : origin + ":" + std::to_string(mark.line + 1);
}

// One section's keys, through the run config's codec (field_codec.h): the same messages for
// a wrong value, and for an unknown key a "did you mean" and the section's keys.
template <class Section>
void read_section(const YAML::Node& body, const std::string& name, const std::string& origin,
                  Section& section) {
  if (!body.IsMap()) {
    throw ConfigError(at_mark(origin, body.Mark()) + ": " + name + ": expected a map of keys, got " +
                          describe(body),
                      name);
  }
  const std::vector<std::string> fields = detail::struct_field_names<Section>();
  std::map<std::string, int> seen;  // key -> its line
  for (const auto& entry : body) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : describe(entry.first);
    const int line = entry.first.Mark().line + 1;
    if (std::find(fields.begin(), fields.end(), key) != fields.end()) {
      // The reader would take the first; say so rather than choose.
      if (const auto [first, fresh] = seen.emplace(key, line); !fresh) {
        throw ConfigError(at_mark(origin, entry.first.Mark()) + ": " + name + "." + key +
                              " is set twice (first at line " + std::to_string(first->second) + ")",
                          name + "." + key);
      }
      continue;
    }
    std::string message = at_mark(origin, entry.first.Mark()) + ": unknown key '" + name + "." + key + "'";
    if (const auto near = detail::closest_match(key, fields); !near.empty()) {
      message += " (did you mean '" + name + "." + near + "'?)";
    }
    throw ConfigError(message + "; the keys of " + name + " are " + detail::joined(fields), name + "." + key);
  }
  detail::StructEntryReader reader{body, ""};
  try {
    section.visit(reader);
  } catch (const detail::FieldTypeError& e) {
    // The reader gives the field's path (".epochs") and its node's place.
    throw ConfigError(at_mark(origin, e.mark()) + ": " + name + e.path() + ": " + e.what(), name + e.path());
  }
}

// A task file is read before the model it fine-tunes: these bounds refuse a damaged value
// (a stray digit, a generated label list run away) before a model is loaded for nothing.
// Single-label classification and tagging sets are tens to thousands of labels; 65536 is
// past any of them, and the classifier holds labels x hidden weights.
constexpr size_t kMaxLabels = size_t(1) << 16;
// No encoder's position table comes near a million (ModernBERT's is 8192); the model's own
// table is checked once it is loaded (require_fits).
constexpr int64_t kMaxSeqLen = int64_t(1) << 20;

// Which metrics score which kind of task.
bool metric_fits(TaskKind kind, TaskMetric metric) {
  switch (kind) {
    case TaskKind::sequence_classification:
      return metric == TaskMetric::accuracy || metric == TaskMetric::macro_f1 || metric == TaskMetric::matthews ||
             metric == TaskMetric::binary_f1;
    case TaskKind::token_classification: return metric == TaskMetric::span_f1 || metric == TaskMetric::accuracy;
    case TaskKind::regression:
      return metric == TaskMetric::mse || metric == TaskMetric::pearson || metric == TaskMetric::spearman;
  }
  return false;
}

void check(bool ok, const TaskConfig& c, const std::string& key, const std::string& what) {
  if (!ok) throw ConfigError(c.origin + ": " + key + " " + what, key);
}

// The fine-tuning recipe's ranges; `section` is where its keys were given ("finetune", or a
// suite's "suite.finetune"), `origin` the file.
void check_finetune(const FinetuneSection& f, const std::string& origin, const std::string& section) {
  auto check = [&](bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw ConfigError(origin + ": " + section + "." + key + " " + what, section + "." + key);
  };
  check(f.epochs >= 1, "epochs", "must be at least 1");
  check(f.batch_size >= 1, "batch_size", "must be at least 1");
  check(f.learning_rate > 0, "learning_rate", "must be positive");
  check(f.warmup_ratio >= 0 && f.warmup_ratio < 1, "warmup_ratio", "must be in [0, 1)");
  check(f.weight_decay >= 0, "weight_decay", "must be >= 0");
  check(f.early_stopping_patience >= 0, "early_stopping_patience", "must be >= 0");
  check(f.max_steps >= 0, "max_steps", "must be >= 0");
  check(f.max_train_examples >= 0, "max_train_examples", "must be >= 0");
}

}  // namespace

TaskConfig load_task_config(const std::string& path) {
  TaskConfig c;
  c.origin = path;
  if (!std::filesystem::is_regular_file(path)) throw ConfigError(path + ": no such task file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg);
  }
  if (!root.IsMap()) throw ConfigError(path + ": expected the sections task: and finetune:");
  const std::vector<std::string> sections = {"task", "finetune"};
  for (const auto& entry : root) {
    const std::string section = entry.first.IsScalar() ? entry.first.Scalar() : describe(entry.first);
    if (section == "task") {
      read_section(entry.second, section, path, c.task);
    } else if (section == "finetune") {
      read_section(entry.second, section, path, c.finetune);
    } else {
      std::string message = at_mark(path, entry.first.Mark()) + ": unknown section '" + section + "'";
      if (const auto near = detail::closest_match(section, sections); !near.empty()) {
        message += " (did you mean '" + near + "'?)";
      }
      throw ConfigError(message + "; the sections are " + detail::joined(sections), section);
    }
  }
  const auto& t = c.task;
  check(!t.name.empty(), c, "task.name", "is missing");
  check(!t.train.empty(), c, "task.train", "is missing");
  check(!t.validation.empty(), c, "task.validation", "is missing");
  const bool regression = t.kind == TaskKind::regression;
  if (regression) {
    check(t.labels.empty(), c, "task.labels", "is not used by a regression task (its label_field holds a number)");
  } else {
    check(t.labels.size() >= 2, c, "task.labels", "needs at least two labels");
  }
  check(t.labels.size() <= kMaxLabels, c, "task.labels",
        "has " + std::to_string(t.labels.size()) + " labels, more than the " + std::to_string(kMaxLabels) +
            " a classification task may have");
  check(t.max_seq_len >= 4, c, "task.max_seq_len", "must be at least 4");
  check(t.max_seq_len <= kMaxSeqLen, c, "task.max_seq_len",
        std::to_string(t.max_seq_len) + " is past " + std::to_string(kMaxSeqLen) +
            " tokens, more than any encoder's positions");
  check(metric_fits(t.kind, t.metric), c, "task.metric",
        "cannot score a " + std::string(to_string(t.kind)) + " task with " + std::string(to_string(t.metric)));
  if (t.metric == TaskMetric::binary_f1) {
    check(t.labels.size() == 2, c, "task.metric",
          "binary_f1 needs exactly two labels, task.labels has " + std::to_string(t.labels.size()));
  }
  if (!t.positive_label.empty()) {
    check(t.metric == TaskMetric::binary_f1, c, "task.positive_label", "is only used by metric binary_f1");
    check(std::find(t.labels.begin(), t.labels.end(), t.positive_label) != t.labels.end(), c, "task.positive_label",
          "'" + t.positive_label + "' is not one of task.labels");
  }
  check_finetune(c.finetune, c.origin, "finetune");
  return c;
}

std::vector<TaskConfig> load_suite_tasks(const SuiteConfig& suite) {
  // The suite file was read whole by load_suite_config; its finetune: map is read here, with
  // its lines, so that a bad key or value names the suite file.
  YAML::Node recipe;
  try {
    recipe = YAML::LoadFile(suite.origin)["suite"]["finetune"];
  } catch (const YAML::Exception& e) {
    throw ConfigError(suite.origin + ": not readable as a suite file: " + e.msg);
  }
  std::vector<TaskConfig> tasks;
  for (const auto& file : suite.tasks) {
    auto task = load_task_config(file);
    if (recipe) {
      read_section(recipe, "suite.finetune", suite.origin, task.finetune);
      check_finetune(task.finetune, suite.origin, "suite.finetune");
    }
    tasks.push_back(std::move(task));
  }
  return tasks;
}

}  // namespace mlm::config
