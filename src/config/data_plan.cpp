#include "mlm/config/data_plan.h"

#include <string>

#include "mlm/config/run_config.h"
#include "mlm/util/errors.h"

namespace mlm::config {

DataPlan resolve_data_plan(const RunConfig& config, int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw ConfigError("data: rank " + std::to_string(rank) + " is not in [0, world size " +
                      std::to_string(world_size) + ")");
  }
  bool reads_a_store = !config.data.store.empty();
  for (const auto& source : config.data.sources) reads_a_store |= !source.store.empty();
  if (reads_a_store && world_size > 1 && config.train.batch_warmup_tokens > 0) {
    // Each rank reads a fixed slice of every step's global batch of the store's order.
    throw ConfigError("train.batch_warmup_tokens: a prepared store on " + std::to_string(world_size) +
                          " ranks gives each rank a fixed slice of every step's batch, which a growing "
                          "batch would break; warm the batch up on one rank or on the streaming path",
                      "train.batch_warmup_tokens");
  }
  DataPlan plan;
  plan.data = config.data;
  plan.masking = config.masking;
  // The data sees only whether sequences are sentence pairs: rtd corrupts what mlm masks, so
  // it packs, masks and stores exactly as mlm (a prepared store serves both).
  plan.objective = trains_sentence_pairs(config.model.objective) ? config.model.objective : Objective::mlm;
  plan.document_ids = !config.model.attend_across_documents;
  plan.seed = static_cast<uint64_t>(config.train.seed);
  plan.eval_seed = static_cast<uint64_t>(config.eval.seed);
  plan.train_batch_size = config.train.micro_batch_size;
  plan.step_sequences = config.train.micro_batch_size * config.train.grad_accum_steps;
  plan.valid_batch_size =
      config.eval.batch_size > 0 ? config.eval.batch_size : config.train.micro_batch_size;
  plan.eval_max_batches = config.eval.max_batches;
  plan.rank = rank;
  plan.world_size = world_size;
  plan.run_dir = config.train.output_dir;
  return plan;
}

}  // namespace mlm::config
