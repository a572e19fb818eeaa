#include "mlm/config/task_config.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <functional>
#include <map>

#include "mlm/util/errors.h"

namespace mlm::config {

const char* to_string(TaskKind kind) {
  return kind == TaskKind::sequence_classification ? "sequence_classification" : "token_classification";
}

const char* to_string(TaskMetric metric) {
  switch (metric) {
    case TaskMetric::accuracy: return "accuracy";
    case TaskMetric::macro_f1: return "macro_f1";
    case TaskMetric::matthews: return "matthews";
    case TaskMetric::span_f1: return "span_f1";
  }
  return "?";
}

namespace {

// One key's reader: parses the node into its field, or throws with `where` ("FILE:LINE: key").
using KeyReader = std::function<void(const YAML::Node&, const std::string& where)>;

template <class T>
KeyReader scalar(T& field) {
  return [&field](const YAML::Node& node, const std::string& where) {
    try {
      if (!node.IsScalar()) throw YAML::Exception(node.Mark(), "not a scalar");
      field = node.as<T>();
    } catch (const YAML::Exception&) {
      throw ConfigError(where + ": expected a single value, got '" + YAML::Dump(node) + "'");
    }
  };
}

template <class E>
KeyReader choice(E& field, std::vector<E> options) {
  return [&field, options](const YAML::Node& node, const std::string& where) {
    const std::string text = node.IsScalar() ? node.Scalar() : YAML::Dump(node);
    std::string names;
    for (const auto option : options) {
      if (text == to_string(option)) {
        field = option;
        return;
      }
      names += (names.empty() ? "" : " | ") + std::string(to_string(option));
    }
    throw ConfigError(where + ": expected one of " + names + ", got '" + text + "'");
  };
}

KeyReader string_list(std::vector<std::string>& field) {
  return [&field](const YAML::Node& node, const std::string& where) {
    if (!node.IsSequence()) throw ConfigError(where + ": expected a list [a, b, ...], got '" + YAML::Dump(node) + "'");
    field.clear();
    for (const auto& item : node) {
      if (!item.IsScalar()) throw ConfigError(where + ": every label must be a single value");
      field.push_back(item.Scalar());
    }
  };
}

void read_section(const YAML::Node& body, const std::string& section, const std::string& origin,
                  const std::map<std::string, KeyReader>& keys) {
  if (!body.IsMap()) {
    throw ConfigError(origin + ":" + std::to_string(body.Mark().line + 1) + ": " + section +
                      ": expected a map of keys");
  }
  for (const auto& entry : body) {
    const std::string key = entry.first.Scalar();
    const std::string where = origin + ":" + std::to_string(entry.first.Mark().line + 1) + ": " + section + "." + key;
    const auto it = keys.find(key);
    if (it == keys.end()) {
      std::string known;
      for (const auto& [name, reader] : keys) known += (known.empty() ? "" : ", ") + name;
      throw ConfigError(where + ": unknown key (the keys of " + section + " are " + known + ")", section + "." + key);
    }
    it->second(entry.second, where);
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

void check(bool ok, const TaskConfig& c, const std::string& key, const std::string& what) {
  if (!ok) throw ConfigError(c.origin + ": " + key + " " + what, key);
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
  auto& t = c.task;
  auto& f = c.finetune;
  const std::map<std::string, KeyReader> task_keys = {
      {"name", scalar(t.name)},
      {"kind", choice(t.kind, {TaskKind::sequence_classification, TaskKind::token_classification})},
      {"train", scalar(t.train)},
      {"validation", scalar(t.validation)},
      {"test", scalar(t.test)},
      {"text_field", scalar(t.text_field)},
      {"text_pair_field", scalar(t.text_pair_field)},
      {"label_field", scalar(t.label_field)},
      {"tokens_field", scalar(t.tokens_field)},
      {"labels", string_list(t.labels)},
      {"metric",
       choice(t.metric, {TaskMetric::accuracy, TaskMetric::macro_f1, TaskMetric::matthews, TaskMetric::span_f1})},
      {"max_seq_len", scalar(t.max_seq_len)},
  };
  const std::map<std::string, KeyReader> finetune_keys = {
      {"epochs", scalar(f.epochs)},
      {"learning_rate", scalar(f.learning_rate)},
      {"batch_size", scalar(f.batch_size)},
      {"warmup_ratio", scalar(f.warmup_ratio)},
      {"weight_decay", scalar(f.weight_decay)},
      {"early_stopping_patience", scalar(f.early_stopping_patience)},
      {"seed", scalar(f.seed)},
      {"shuffle", scalar(f.shuffle)},
      {"dropout", scalar(f.dropout)},
      {"max_steps", scalar(f.max_steps)},
      {"max_train_examples", scalar(f.max_train_examples)},
      {"max_grad_norm", scalar(f.max_grad_norm)},
  };
  for (const auto& entry : root) {
    const std::string section = entry.first.Scalar();
    if (section == "task") {
      read_section(entry.second, section, path, task_keys);
    } else if (section == "finetune") {
      read_section(entry.second, section, path, finetune_keys);
    } else {
      throw ConfigError(path + ":" + std::to_string(entry.first.Mark().line + 1) + ": unknown section '" + section +
                        "' (the sections are task, finetune)");
    }
  }
  check(!t.name.empty(), c, "task.name", "is missing");
  check(!t.train.empty(), c, "task.train", "is missing");
  check(!t.validation.empty(), c, "task.validation", "is missing");
  check(t.labels.size() >= 2, c, "task.labels", "needs at least two labels");
  check(t.labels.size() <= kMaxLabels, c, "task.labels",
        "has " + std::to_string(t.labels.size()) + " labels, more than the " + std::to_string(kMaxLabels) +
            " a classification task may have");
  check(t.max_seq_len >= 4, c, "task.max_seq_len", "must be at least 4");
  check(t.max_seq_len <= kMaxSeqLen, c, "task.max_seq_len",
        std::to_string(t.max_seq_len) + " is past " + std::to_string(kMaxSeqLen) +
            " tokens, more than any encoder's positions");
  const bool tagging = t.kind == TaskKind::token_classification;
  check(tagging == (t.metric == TaskMetric::span_f1) || (tagging && t.metric == TaskMetric::accuracy), c,
        "task.metric", std::string("cannot score a ") + to_string(t.kind) + " task with " + to_string(t.metric));
  check(f.epochs >= 1, c, "finetune.epochs", "must be at least 1");
  check(f.batch_size >= 1, c, "finetune.batch_size", "must be at least 1");
  check(f.learning_rate > 0, c, "finetune.learning_rate", "must be positive");
  check(f.warmup_ratio >= 0 && f.warmup_ratio < 1, c, "finetune.warmup_ratio", "must be in [0, 1)");
  check(f.weight_decay >= 0, c, "finetune.weight_decay", "must be >= 0");
  check(f.early_stopping_patience >= 0, c, "finetune.early_stopping_patience", "must be >= 0");
  check(f.max_steps >= 0, c, "finetune.max_steps", "must be >= 0");
  check(f.max_train_examples >= 0, c, "finetune.max_train_examples", "must be >= 0");
  return c;
}

}  // namespace mlm::config
