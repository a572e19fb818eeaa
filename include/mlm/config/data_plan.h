#pragma once
// What the data and masking stages are handed: the settings they run with, resolved once
// from the RunConfig (resolve_data_plan) for one data-parallel rank. data/ and masking/ see
// this and never the whole tree, so what they depend on is written here and nowhere else.
#include <cstdint>
#include <string>

#include "mlm/config/enums.h"
#include "mlm/config/sections/data.h"
#include "mlm/config/sections/masking.h"

namespace mlm::config {

struct RunConfig;

/// Every field is filled by resolve_data_plan(); the keys it comes from are beside each.
struct DataPlan {
  DataConfig data;                       // data.*: what is read, how it is packed (seq_len)
  MaskingConfig masking;                 // masking.*
  Objective objective = Objective::mlm;  // as the data sees model.objective: nsp and sop pack
                                         // sentence pairs; mlm and rtd are both mlm here
  bool document_ids = false;             // !model.attend_across_documents: batches carry
                                         // each token's document
  uint64_t seed = 0;                     // train.seed: file order, shuffles, pair cuts,
                                         // mixture draws and the train split's masks
  uint64_t eval_seed = 0;                // eval.seed: the valid split's masks
  int64_t train_batch_size = 1;          // train.micro_batch_size: rows of a train batch
  int64_t step_sequences = 1;            // train_batch_size x train.grad_accum_steps: this
                                         // rank's sequences per optimizer step (a prepared
                                         // store gives each rank a slice of every step)
  int64_t valid_batch_size = 1;          // eval.batch_size, else train.micro_batch_size
  int64_t eval_max_batches = 0;          // eval.max_batches of all ranks together (0 = all)
  int rank = 0;                          // this process's data-parallel rank
  int world_size = 1;                    // ranks reading the same global stream
  std::string run_dir;                   // train.output_dir: where a mixture with
                                         // data.temperature caches its text sources' sizes
};

/// The plan of rank `rank` of `world_size` for a validated `config` (validate.h checks the
/// keys' ranges; this adds only the rank's). ConfigError when rank is not in [0, world_size).
DataPlan resolve_data_plan(const RunConfig& config, int rank = 0, int world_size = 1);

}  // namespace mlm::config
