#include "mlm/train/loop/evaluator.h"

#include <algorithm>

#include "mlm/train/loop/batch_tensors.h"
#include "mlm/train/loop/training_step.h"
#include "mlm/util/elapsed.h"

namespace mlm::train {

EvalResult evaluate(model::MaskedLm model, const config::RunConfig& config,
                    const text::Tokenizer& tokenizer, dist::Communicator& comm,
                    const torch::Device& device, torch::Dtype compute_dtype) {
  const masking::ValidationBatches batches(
      config::resolve_data_plan(config, comm.rank(), comm.world_size()), tokenizer);
  return evaluate(model, batches, comm, device, compute_dtype);
}

EvalResult evaluate(model::MaskedLm model, const masking::ValidationBatches& batches,
                    dist::Communicator& comm, const torch::Device& device, torch::Dtype compute_dtype) {
  const auto start = SteadyClock::now();

  const bool was_training = model->is_training();
  model->eval();
  torch::NoGradGuard no_grad;
  double loss_sum = 0, nsp_loss_sum = 0;
  int64_t masked = 0, correct = 0, pairs = 0, nsp_correct = 0, sequences = 0, scored = 0, tokens = 0;
  torch::Tensor rtd_sums;  // objective rtd: RtdCounts' fields, on the device
  std::vector<double> label_counts(static_cast<size_t>(batches.vocab_size()), 0.0);
  for (int64_t index = 0; index < batches.size(); ++index) {
    const masking::MaskedBatch batch = batches.batch(index);
    // rtd's samples of batch `index` are drawn under a seed of its own: an evaluation draws
    // the same whenever it runs, and leaves the training's generator state alone.
    const uint64_t sample_seed = batches.seed() + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(index + 1);
    const auto out = forward_batch(model, batch, device, compute_dtype, sample_seed);
    loss_sum += out.mlm_loss_sum.item<double>();
    correct += out.mlm_correct.item<int64_t>();
    masked += batch.num_masked();
    for (const int64_t position : batch.masked_positions) {
      const auto label = static_cast<size_t>(batch.labels[static_cast<size_t>(position)]);
      if (label < label_counts.size()) label_counts[label] += 1;
    }
    if (out.nsp_loss_sum.defined()) {
      nsp_loss_sum += out.nsp_loss_sum.item<double>();
      nsp_correct += out.nsp_correct.item<int64_t>();
      pairs += static_cast<int64_t>(batch.nsp_labels.size());
    }
    if (out.rtd_loss_sum.defined()) rtd_sums = rtd_sums.defined() ? rtd_sums + rtd_values(out) : rtd_values(out);
    tokens += count_tokens(batch);
    sequences += batch.batch_size;
    ++scored;
  }
  if (was_training) model->train();

  const auto t = comm.sum_across_ranks(
      {loss_sum, nsp_loss_sum, static_cast<double>(masked), static_cast<double>(correct),
       static_cast<double>(pairs), static_cast<double>(nsp_correct),
       static_cast<double>(sequences), static_cast<double>(scored), static_cast<double>(tokens)});
  EvalResult result;
  result.mlm_loss_sum = t[0];
  result.nsp_loss_sum = t[1];
  result.num_masked = static_cast<int64_t>(t[2]);
  result.mlm_correct = static_cast<int64_t>(t[3]);
  result.num_sentence_pairs = static_cast<int64_t>(t[4]);
  result.nsp_correct = static_cast<int64_t>(t[5]);
  result.sequences = static_cast<int64_t>(t[6]);
  result.batches = static_cast<int64_t>(t[7]);
  result.tokens = static_cast<int64_t>(t[8]);
  result.rtd = model->has_rtd();
  std::vector<double> rtd(RtdCounts::kFields, 0.0);
  if (rtd_sums.defined()) {
    const auto values = rtd_sums.cpu();
    rtd.assign(values.data_ptr<double>(), values.data_ptr<double>() + RtdCounts::kFields);
  }
  rtd = comm.sum_across_ranks(std::move(rtd));
  result.rtd_counts = RtdCounts::from(rtd.data());
  label_counts = comm.sum_across_ranks(std::move(label_counts));
  result.unigram_correct = static_cast<int64_t>(
      label_counts.empty() ? 0.0 : *std::max_element(label_counts.begin(), label_counts.end()));
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace mlm::train
