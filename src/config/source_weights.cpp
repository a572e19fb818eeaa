#include "mlm/config/source_weights.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>

#include "field_codec.h"
#include "mlm/util/errors.h"

namespace mlm::config {

std::string source_name(const DataConfig& data, size_t i) {
  const std::string& name = data.sources.at(i).name;
  return name.empty() ? std::to_string(i) : name;
}

std::vector<double> source_base_weights(const DataConfig& data) {
  std::set<std::string> names;
  for (size_t i = 0; i < data.sources.size(); ++i) {
    const std::string name = source_name(data, i);
    const std::string key = "data.sources[" + std::to_string(i) + "].name";
    if (name.find('/') != std::string::npos) {
      throw ConfigError(key + ": '" + name + "' contains '/' (it ends a metrics key)", key);
    }
    if (!names.insert(name).second) throw ConfigError(key + ": '" + name + "' names two sources", key);
  }
  if (!(std::isfinite(data.temperature) && data.temperature >= 0)) {
    throw ConfigError("data.temperature (" + detail::format_number(data.temperature) +
                          ") must be a finite number > 0 (weights x tokens^temperature), or 0 "
                          "for the weights as given",
                      "data.temperature");
  }
  std::vector<double> weights;
  for (const auto& source : data.sources) weights.push_back(source.weight);
  for (const auto& [name, text] : data.source_weights.entries) {
    const std::string key = "data.source_weights." + name;
    size_t index = data.sources.size();
    for (size_t i = 0; i < data.sources.size(); ++i) {
      if (source_name(data, i) == name) index = i;
    }
    if (index == data.sources.size()) {
      std::string known;
      for (size_t i = 0; i < data.sources.size(); ++i) known += (i ? ", " : "") + source_name(data, i);
      throw ConfigError(key + ": no source is named '" + name + "' (data.sources: " + known + ")", key);
    }
    double weight = -1;
    try {
      detail::decode(YAML::Load(text), weight);
    } catch (const std::exception& e) {
      throw ConfigError(key + ": " + e.what(), key);
    }
    if (!(std::isfinite(weight) && weight >= 0)) {
      throw ConfigError(key + " (" + text + ") must be a finite number >= 0 (0 = not drawn)", key);
    }
    weights[index] = weight;
  }
  double total = 0;
  for (const double w : weights) total += w;
  if (!data.sources.empty() && !(total > 0)) {
    throw ConfigError("data.source_weights: the sources' weights sum to 0; give at least one "
                          "source a weight > 0",
                      "data.source_weights");
  }
  return weights;
}

}  // namespace mlm::config
