#include "mlm/train/merge/merge_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>

#include "mlm/util/errors.h"

namespace mlm::train::merge {
namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) { throw UsageError(where + ": " + what); }

void allow_only(const YAML::Node& node, const std::string& where, const std::set<std::string>& keys) {
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    if (!keys.count(key)) {
      std::string known;
      for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k;
      bad(where, fmt::format("unknown key '{}' (mlm-merge reads {})", key, known));
    }
  }
}

template <class T>
T scalar(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar()) bad(where, "a single value is expected (per-layer lists and filters are not supported)");
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    bad(where, "'" + node.as<std::string>() + "' is not a valid value");
  }
}

// The shared parameters: t, normalize, lambda, rescale (weight and density belong to a model).
void read_parameters(const YAML::Node& node, const std::string& where, MergeSpec& spec) {
  if (!node.IsMap()) bad(where, "a mapping is expected");
  allow_only(node, where, {"t", "normalize", "lambda", "rescale"});
  if (node["t"]) spec.t = scalar<double>(node["t"], where + ".t");
  if (node["normalize"]) spec.normalize = scalar<bool>(node["normalize"], where + ".normalize");
  if (node["lambda"]) spec.lambda = scalar<double>(node["lambda"], where + ".lambda");
  if (node["rescale"]) spec.rescale = scalar<bool>(node["rescale"], where + ".rescale");
}

ModelEntry read_model(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap() || !node["model"]) bad(where, "each entry needs 'model: PATH'");
  allow_only(node, where, {"model", "parameters", "last"});
  ModelEntry entry;
  entry.path = scalar<std::string>(node["model"], where + ".model");
  if (node["last"]) entry.last = scalar<int64_t>(node["last"], where + ".last");
  if (const auto p = node["parameters"]) {
    if (!p.IsMap()) bad(where + ".parameters", "a mapping is expected");
    allow_only(p, where + ".parameters", {"weight", "density"});
    if (p["weight"]) entry.weight = scalar<double>(p["weight"], where + ".parameters.weight");
    if (p["density"]) entry.density = scalar<double>(p["density"], where + ".parameters.density");
  }
  return entry;
}

}  // namespace

Method parse_method(const std::string& name) {
  if (name == "average" || name == "linear") return Method::average;
  if (name == "task_arithmetic") return Method::task_arithmetic;
  if (name == "ties") return Method::ties;
  if (name == "slerp") return Method::slerp;
  throw UsageError("merge_method '" + name + "': mlm-merge has average (linear), task_arithmetic, ties and slerp");
}

std::string to_string(Method method) {
  switch (method) {
    case Method::average: return "average";
    case Method::task_arithmetic: return "task_arithmetic";
    case Method::ties: return "ties";
    case Method::slerp: return "slerp";
  }
  return "?";
}

MergeSpec read_merge_yaml(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    bad(path, std::string("cannot read the merge config: ") + e.what());
  }
  if (!root.IsMap()) bad(path, "a mapping with models and merge_method is expected");
  // dtype / out_dtype: mlm-merge computes and writes float32; anything else is refused.
  allow_only(root, path, {"models", "base_model", "merge_method", "parameters", "dtype", "out_dtype", "pair"});
  MergeSpec spec;
  spec.origin = path;
  if (!root["merge_method"]) bad(path, "merge_method is missing");
  try {
    spec.method = parse_method(scalar<std::string>(root["merge_method"], path + ": merge_method"));
  } catch (const UsageError& e) {
    bad(path, e.what());
  }
  for (const char* key : {"dtype", "out_dtype"})
    if (root[key] && scalar<std::string>(root[key], path + ": " + key) != "float32")
      bad(path, std::string(key) + ": mlm-merge merges and writes float32 only");
  if (!root["models"] || !root["models"].IsSequence()) bad(path, "models: a list of {model: PATH} is expected");
  for (size_t i = 0; i < root["models"].size(); ++i)
    spec.models.push_back(read_model(root["models"][i], fmt::format("{}: models[{}]", path, i)));
  if (root["base_model"]) spec.base_model = scalar<std::string>(root["base_model"], path + ": base_model");
  if (root["parameters"]) read_parameters(root["parameters"], path + ": parameters", spec);
  if (root["pair"]) {
    const auto part = scalar<std::string>(root["pair"], path + ": pair");
    if (part != "whole" && part != "discriminator") bad(path, "pair: whole or discriminator");
    spec.pair = part == "whole" ? PairPart::whole : PairPart::discriminator;
  }
  return spec;
}

void validate(const MergeSpec& spec) {
  const auto& where = spec.origin;
  if (spec.models.empty()) bad(where, "no models to merge");
  const bool needs_base = spec.method == Method::task_arithmetic || spec.method == Method::ties;
  if (needs_base && spec.base_model.empty())
    bad(where, to_string(spec.method) + " needs a base model (base_model / --base): the deltas are taken from it");
  if (spec.method == Method::average && !spec.base_model.empty())
    bad(where, "average takes no base model; list it among the models");
  if (spec.method == Method::slerp) {
    if (spec.models.size() != 2 || spec.models[0].last > 1 || spec.models[1].last > 1)
      bad(where, "slerp merges exactly two models");
    if (spec.base_model != spec.models[0].path && spec.base_model != spec.models[1].path)
      bad(where, "slerp needs base_model: one of its two models (t = 0 gives it)");
    if (!spec.t) bad(where, "slerp needs parameters: t");
  }
  if (spec.t && !(*spec.t >= 0 && *spec.t <= 1)) bad(where, fmt::format("t {} is outside [0, 1]", *spec.t));
  if (spec.t && spec.method != Method::slerp) bad(where, "t is slerp's parameter");
  if (spec.rescale && spec.method != Method::ties) bad(where, "rescale is ties' parameter");
  if (spec.normalize && spec.method == Method::slerp) bad(where, "normalize is not slerp's parameter");
  if (spec.lambda != 1.0 && spec.method != Method::task_arithmetic && spec.method != Method::ties)
    bad(where, "lambda is task_arithmetic's and ties' parameter");
  if (!std::isfinite(spec.lambda)) bad(where, "lambda is not a finite number");
  double weight_sum = 0;
  for (const auto& m : spec.models) {
    const auto model = "model " + m.path;
    if (m.last < 0) bad(where, model + ": last " + std::to_string(m.last) + " is negative");
    if (m.density) {
      if (spec.method != Method::ties) bad(where, model + ": density is ties' parameter");
      if (!(*m.density > 0 && *m.density <= 1))
        bad(where, fmt::format("{}: density {} is outside (0, 1]", model, *m.density));
    }
    if (m.weight && spec.method == Method::slerp) bad(where, model + ": slerp takes t, not weights");
    if (m.weight && !std::isfinite(*m.weight)) bad(where, model + ": weight is not a finite number");
    weight_sum += m.weight.value_or(1.0) * static_cast<double>(std::max<int64_t>(m.last, 1));
  }
  const bool normalize = spec.normalize.value_or(spec.method != Method::task_arithmetic);
  if (spec.method != Method::slerp && normalize && !(weight_sum > 0))
    bad(where, fmt::format("the weights sum to {}, not to a positive number", weight_sum));
}

}  // namespace mlm::train::merge
