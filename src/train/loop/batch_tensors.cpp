#include "mlm/train/loop/batch_tensors.h"

#include <numeric>

namespace mlm::train {
namespace {

torch::Tensor to_tensor(const std::vector<int64_t>& values, torch::IntArrayRef shape,
                        const torch::Device& device) {
  // from_blob does not own the memory: clone before the vector can go away.
  auto cpu = torch::from_blob(const_cast<int64_t*>(values.data()), shape, torch::kInt64).clone();
  return device.is_cpu() ? cpu : cpu.to(device, /*non_blocking=*/false);
}

}  // namespace

model::MlmInputs to_bert_inputs(const masking::MaskedBatch& batch, const torch::Device& device) {
  const int64_t b = batch.batch_size, s = batch.seq_len;
  const int64_t m = batch.num_masked();
  model::MlmInputs inputs;
  inputs.input_ids = to_tensor(batch.input_ids, {b, s}, device);
  inputs.token_type_ids = to_tensor(batch.token_type_ids, {b, s}, device);
  inputs.has_padding = batch.has_padding();
  if (inputs.has_padding) inputs.attention_mask = to_tensor(batch.attention_mask, {b, s}, device);
  std::vector<int64_t> labels(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) labels[i] = batch.labels[static_cast<size_t>(batch.masked_positions[i])];
  inputs.masked_positions = to_tensor(batch.masked_positions, {m}, device);
  inputs.masked_labels = to_tensor(labels, {m}, device);
  if (!batch.nsp_labels.empty()) inputs.nsp_labels = to_tensor(batch.nsp_labels, {b}, device);
  if (!batch.document_ids.empty()) inputs.document_ids = to_tensor(batch.document_ids, {b, s}, device);
  return inputs;
}

int64_t count_tokens(const masking::MaskedBatch& batch) {
  return std::accumulate(batch.attention_mask.begin(), batch.attention_mask.end(), int64_t{0});
}

}  // namespace mlm::train
