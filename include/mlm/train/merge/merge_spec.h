#pragma once
// What mlm-merge is asked to do, from its flags or from a mergekit-style YAML file (models,
// base_model, merge_method, parameters: weight, density, t, normalize, lambda, rescale).
// Torch-free: the main parses into it and hands it to merge_command.h.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlm::train::merge {

/// average = mergekit's linear; the others as mergekit names them.
enum class Method { average, task_arithmetic, ties, slerp };
/// "average" (also "linear"), "task_arithmetic", "ties", "slerp"; UsageError otherwise.
Method parse_method(const std::string& name);
std::string to_string(Method method);

/// Which networks of a replaced-token-detection pair (DIR/generator, DIR/discriminator) merge:
/// both into a pair directory, or the discriminators alone into one model directory.
enum class PairPart { whole, discriminator };

struct ModelEntry {
  std::string path;               // a checkpoint, a run directory, or a Hugging Face directory
  std::optional<double> weight;   // default 1
  std::optional<double> density;  // ties; default 1
  int64_t last = 0;               // a run directory: its last N complete checkpoints (0: the newest)
};

struct MergeSpec {
  Method method = Method::average;
  std::vector<ModelEntry> models;
  std::string base_model;          // task_arithmetic, ties: required; slerp: one of the two models
  std::optional<double> t;         // slerp: 0 = base_model, 1 = the other
  std::optional<bool> normalize;   // default: true for average and ties, false for task_arithmetic
  double lambda = 1.0;             // task_arithmetic, ties: scales the merged delta
  bool rescale = false;            // ties: each trimmed delta rescaled to its L1 norm before
  PairPart pair = PairPart::whole;
  std::string origin;              // the YAML file, or "the command line", for error messages
};

/// A mergekit-style YAML file. UsageError naming the file and key for what it cannot take
/// (slices, per-layer lists, filters, unknown keys) or a value of the wrong type.
MergeSpec read_merge_yaml(const std::string& path);

/// The checks that need no file: a known method with what it needs (a base for
/// task_arithmetic and ties, two models and t in [0, 1] for slerp), every density in (0, 1],
/// weights that sum to a positive number (average, ties with normalize). UsageError naming
/// `origin` and the model.
void validate(const MergeSpec& spec);

}  // namespace mlm::train::merge
