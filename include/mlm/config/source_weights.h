#pragma once
// A mixture's sources by name and the weights a configuration (or a phase of it) gives them:
// data.sources[i].weight, replaced for the sources data.source_weights names. The size term
// of data.temperature is applied by the data stage (data/mixture/mixture_weights.h), which
// measures the sizes.
#include <string>
#include <vector>

#include "mlm/config/sections/data.h"

namespace mlm::config {

/// data.sources[i].name, or "i" when it has none: the key of data.source_weights and of the
/// eval_mlm_accuracy/<source> rows.
std::string source_name(const DataConfig& data, size_t i);

/// Each source's weight before the size term, in the order of data.sources. ConfigError
/// naming the key for a name given twice or containing '/', data.source_weights naming an
/// unknown source or giving a weight that is not a finite number >= 0, a data.temperature
/// that is negative or not finite, and weights that do not sum to a number > 0.
std::vector<double> source_base_weights(const DataConfig& data);

}  // namespace mlm::config
