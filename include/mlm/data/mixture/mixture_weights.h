#pragma once
// The weights a mixture draws its sources with, for one configuration (one phase):
// w_s = base_s x tokens_s^alpha with alpha = data.temperature > 0 (XLM-R's p_s ∝ n_s^alpha
// when every base weight is 1), else w_s = base_s (config/source_weights.h: the source's
// weight or data.source_weights' entry; 0 = not drawn). The shares are w_s / sum of the w.
//
// tokens_s is the size of source s's train split in tokens of the run's tokenizer, specials
// left out: a store's manifest count (the store is refused for another tokenizer), or for
// text files a count made by tokenizing them once and cached in <train.output_dir>/
// mixture_sizes.json under a key of the tokenizer fingerprint, the files (path, bytes,
// mtime) and the data.* keys that decide the documents, so another tokenizer or a changed
// file is counted again.
#include <cstdint>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// Each source's train split in tokens, in the order of data.sources. DataError naming the
/// source (data.sources[i] and its name) when its train split has no token.
std::vector<int64_t> source_token_counts(const config::DataPlan& plan, const text::Tokenizer& tokenizer);

/// w_s for every source of plan.data.sources (the sizes are measured only with a
/// temperature). Without data.temperature and data.source_weights: each source's weight,
/// exactly as given.
std::vector<double> mixture_weights(const config::DataPlan& plan, const text::Tokenizer& tokenizer);

/// w_s from the base weights and sizes (sizes ignored when temperature is 0).
std::vector<double> tempered_weights(const std::vector<double>& base, const std::vector<int64_t>& tokens,
                                     double temperature);

}  // namespace mlm::data
