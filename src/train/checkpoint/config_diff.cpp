#include "mlm/train/checkpoint/config_diff.h"

#include <sstream>
#include <type_traits>
#include <utility>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {
namespace {

template <class T>
std::string leaf_to_string(const T& value);

// An entry of a list of maps (data.sources): "{files: [a.txt], weight: 0.7, store: }".
struct EntryToString {
  std::string out;
  template <class F>
  void operator()(const char* name, F& value) {
    out += (out.empty() ? "" : ", ") + std::string(name) + ": " + leaf_to_string(value);
  }
};

template <class T>
std::string leaf_to_string(const T& value) {
  if constexpr (std::is_same_v<T, config::KeySettings>) {
    std::string out;
    for (const auto& [key, text] : value.entries) out += (out.empty() ? "" : ", ") + key + ": " + text;
    return "{" + out + "}";
  } else if constexpr (std::is_same_v<T, config::SourceConfig> ||
                       std::is_same_v<T, config::PhaseConfig>) {
    T entry = value;  // visit() is non-const
    EntryToString fields;
    entry.visit(fields);
    return "{" + fields.out + "}";
  } else if constexpr (std::is_enum_v<T>) {
    return std::string(config::to_string(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else if constexpr (std::is_arithmetic_v<T>) {
    std::ostringstream out;
    out.precision(17);
    out << value;
    return out.str();
  } else {  // vectors and arrays
    std::string out = "[";
    for (const auto& item : value) {
      if (out.size() > 1) out += ", ";
      out += leaf_to_string(item);
    }
    return out + "]";
  }
}

struct Flattener {
  std::string prefix;
  std::vector<std::pair<std::string, std::string>> leaves;

  template <class Section>
  void section(const char* name, Section& section) {
    const std::string saved = prefix;
    prefix = saved + name + ".";
    section.visit(*this);
    prefix = saved;
  }
  template <class T>
  void operator()(const char* name, T& value) {
    leaves.emplace_back(prefix + name, leaf_to_string(value));
  }
};

std::vector<std::pair<std::string, std::string>> flatten(config::RunConfig config) {
  Flattener flattener;
  config.visit(flattener);
  flattener.leaves.emplace_back("phases", leaf_to_string(config.phases));
  return flattener.leaves;
}

}  // namespace

std::vector<ConfigChange> diff_configs(const config::RunConfig& before,
                                       const config::RunConfig& after) {
  const auto a = flatten(before);
  const auto b = flatten(after);
  std::vector<ConfigChange> changes;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].second != b[i].second) changes.push_back({a[i].first, a[i].second, b[i].second});
  }
  return changes;
}

bool is_architecture_key(const std::string& key) {
  // Dropout, initialisation and where the weights first came from do not change what a
  // checkpoint's tensors mean; the head's sparse/dense switch is an execution choice, and
  // which documents a token may attend to is a property of the batches, not of the weights.
  static const char* const kFree[] = {
      "model.hidden_dropout_prob", "model.attention_probs_dropout_prob",
      "model.initializer_range",   "model.init_from",
      "model.sparse_head",         "model.attend_across_documents",
      "model.embedding_dropout",   "model.mlp_dropout",
      "model.initializer_cutoff_factor", "model.activation_checkpointing",
  };
  if (key.rfind("model.", 0) == 0) {
    for (const char* free_key : kFree) {
      if (key == free_key) return false;
    }
    return true;
  }
  // The tokenizer is compared by its model bytes (the trainer), not by its settings: a
  // moved file is fine, a retrained one is not.
  return false;
}

bool is_data_key(const std::string& key) {
  return key.rfind("data.", 0) == 0 || key.rfind("masking.", 0) == 0 || key == "phases";
}

void check_resume_compatible(const config::RunConfig& checkpoint_config,
                             const config::RunConfig& run_config,
                             const std::string& checkpoint_dir, ResumeRule rule) {
  const bool same_data = rule == ResumeRule::same_model_and_data;
  std::string errors;
  for (const auto& change : diff_configs(checkpoint_config, run_config)) {
    if (is_architecture_key(change.key) || (same_data && is_data_key(change.key))) {
      if (!errors.empty()) errors += "; ";
      errors += change.key + ": " + change.before + " -> " + change.after;
    } else {
      log::info("ckpt", "resuming with a changed setting: {}: {} -> {}", change.key,
                change.before, change.after);
    }
  }
  if (!errors.empty()) {
    throw ConfigError("cannot resume from " + checkpoint_dir + ": the " +
                      (same_data ? "model or data settings differ" : "model differs") +
                      " from the checkpoint's (" + errors +
                      "); start a new run (another train.output_dir) or restore these settings" +
                      (same_data ? " (--resume latest allows data and masking changes)" : ""));
  }
}

}  // namespace mlm::train
