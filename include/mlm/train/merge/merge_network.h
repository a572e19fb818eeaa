#pragma once
// One network of a merge (a model, or a pair's generator or discriminator), streamed: for each
// tensor of the reference (the base, else the first model) its value in every input is read,
// merged, and kept; the inputs' other tensors are never in memory together.
#include <filesystem>
#include <string>

#include "mlm/model/hf/weight_format.h"
#include "mlm/train/merge/merge_inputs.h"
#include "mlm/train/merge/merge_spec.h"

namespace mlm::train::merge {

struct NetworkMerge {
  int64_t tensors = 0;        // merged by the method
  int64_t copied = 0;         // integer tensors, equal in every input, copied
};

/// Merges `network` ("" for a model directory) of every input into `out_dir` (created): its
/// config.json and weights through the export's writer (write_hf_files), and the reference's
/// other files (the tokenizer's) copied. UsageError naming the input for inputs that cannot
/// merge (merge_compat.h) or a damaged weight file.
NetworkMerge merge_network(const MergeSpec& spec, const ResolvedInputs& inputs, const std::string& network,
                           const std::filesystem::path& out_dir, model::WeightFormat format);

}  // namespace mlm::train::merge
