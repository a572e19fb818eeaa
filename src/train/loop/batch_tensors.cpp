#include "mlm/train/loop/batch_tensors.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace mlm::train {
namespace {

/// The batch's arrays packed into one int64 buffer, to be uploaded in one copy and cut into
/// the input tensors on the device.
class PackedArrays {
 public:
  /// Reserves `shape`'s elements for `values` (copied by pack()); returns its slot.
  size_t add(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
    parts_.push_back({&values, std::move(shape), total_});
    total_ += static_cast<int64_t>(values.size());
    return parts_.size() - 1;
  }

  /// The buffer on `device`: pinned on the host for a GPU and copied without blocking (the
  /// caching host allocator keeps the pinned block until the copy has run, then reuses it).
  void upload(const torch::Device& device) {
    auto host = torch::empty({total_}, torch::TensorOptions().dtype(torch::kInt64).pinned_memory(device.is_cuda()));
    auto* out = host.data_ptr<int64_t>();
    for (const auto& part : parts_) {
      std::memcpy(out + part.offset, part.values->data(), part.values->size() * sizeof(int64_t));
    }
    buffer_ = device.is_cpu() ? host : host.to(device, /*non_blocking=*/true);
  }

  torch::Tensor at(size_t slot) const {
    const auto& part = parts_[slot];
    return buffer_.narrow(0, part.offset, static_cast<int64_t>(part.values->size())).view(part.shape);
  }

 private:
  struct Part {
    const std::vector<int64_t>* values;
    std::vector<int64_t> shape;
    int64_t offset;
  };
  std::vector<Part> parts_;
  int64_t total_ = 0;
  torch::Tensor buffer_;
};

/// Runs of real tokens of one document within a row, in row-major order: the segments
/// TokenLayout::of finds on the device, counted here so that it need not read them back.
int64_t document_runs(const masking::MaskedBatch& batch) {
  int64_t runs = 0, last_row = -1, last_document = 0;
  for (int64_t b = 0; b < batch.batch_size; ++b) {
    for (int64_t s = 0; s < batch.seq_len; ++s) {
      const auto i = static_cast<size_t>(b * batch.seq_len + s);
      if (batch.attention_mask[i] == 0) continue;
      if (b != last_row || batch.document_ids[i] != last_document) ++runs;
      last_row = b;
      last_document = batch.document_ids[i];
    }
  }
  return runs;
}

int64_t max_selected_in_row(const masking::MaskedBatch& batch) {
  std::vector<int64_t> per_row(static_cast<size_t>(batch.batch_size), 0);
  for (auto position : batch.masked_positions) ++per_row[static_cast<size_t>(position / batch.seq_len)];
  return per_row.empty() ? 0 : *std::max_element(per_row.begin(), per_row.end());
}

}  // namespace

model::MlmInputs to_bert_inputs(const masking::MaskedBatch& batch, const torch::Device& device) {
  const int64_t b = batch.batch_size, s = batch.seq_len;
  const int64_t m = batch.num_masked();
  std::vector<int64_t> labels(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) labels[i] = batch.labels[static_cast<size_t>(batch.masked_positions[i])];

  model::MlmInputs inputs;
  inputs.has_padding = batch.has_padding();
  PackedArrays arrays;
  const auto input_ids = arrays.add(batch.input_ids, {b, s});
  const auto token_type_ids = arrays.add(batch.token_type_ids, {b, s});
  const auto masked_positions = arrays.add(batch.masked_positions, {m});
  const auto masked_labels = arrays.add(labels, {m});
  const auto attention_mask = inputs.has_padding ? arrays.add(batch.attention_mask, {b, s}) : 0;
  const auto nsp_labels = batch.nsp_labels.empty() ? 0 : arrays.add(batch.nsp_labels, {b});
  const auto document_ids = batch.document_ids.empty() ? 0 : arrays.add(batch.document_ids, {b, s});
  arrays.upload(device);

  inputs.input_ids = arrays.at(input_ids);
  inputs.token_type_ids = arrays.at(token_type_ids);
  inputs.masked_positions = arrays.at(masked_positions);
  inputs.masked_labels = arrays.at(masked_labels);
  if (inputs.has_padding) inputs.attention_mask = arrays.at(attention_mask);
  if (!batch.nsp_labels.empty()) inputs.nsp_labels = arrays.at(nsp_labels);
  if (!batch.document_ids.empty()) inputs.document_ids = arrays.at(document_ids);
  // The shapes the model would otherwise read back from the device.
  inputs.layout_counts.tokens = count_tokens(batch);
  if (!batch.document_ids.empty()) inputs.layout_counts.segments = document_runs(batch);
  inputs.max_selected_in_row = max_selected_in_row(batch);
  return inputs;
}

int64_t count_tokens(const masking::MaskedBatch& batch) {
  return std::accumulate(batch.attention_mask.begin(), batch.attention_mask.end(), int64_t{0});
}

}  // namespace mlm::train
