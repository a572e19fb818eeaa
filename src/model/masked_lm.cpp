#include "mlm/model/masked_lm.h"

#include <unordered_set>

#include "mlm/model/hf/tensor_file.h"
#include "mlm/model/kernels/masked_lm_loss.h"
#include "mlm/model/layers.h"

namespace mlm::model {
namespace F = torch::nn::functional;

MaskedLmImpl::MaskedLmImpl(const config::ModelConfig& c, int64_t vocab_size, int64_t pad_id)
    : config_(c), vocab_size_(vocab_size), pad_id_(pad_id) {
  TORCH_CHECK(vocab_size > 0, "vocab_size must be positive, got ", vocab_size);
  TORCH_CHECK(pad_id >= 0 && pad_id < vocab_size, "pad_id ", pad_id, " outside the vocabulary of ",
              vocab_size);
  const int64_t multiple = std::max<int64_t>(1, c.pad_vocab_multiple);
  padded_vocab_ = (vocab_size + multiple - 1) / multiple * multiple;
}

void MaskedLmImpl::check_inputs(const MlmInputs& in) {
  TORCH_CHECK(in.input_ids.defined() && in.input_ids.dim() == 2, "input_ids must be [B,S]");
  TORCH_CHECK(in.masked_positions.defined() && in.masked_labels.defined(),
              "masked_positions and masked_labels are required");
  TORCH_CHECK(in.masked_positions.numel() == in.masked_labels.numel(), "masked_positions (",
              in.masked_positions.numel(), ") and masked_labels (", in.masked_labels.numel(),
              ") differ in length");
}

void MaskedLmImpl::zero_unused_embedding_rows() {
  torch::NoGradGuard no_grad;
  auto words = word_embeddings();
  words[pad_id_].zero_();
  words.narrow(0, vocab_size_, padded_vocab_ - vocab_size_).zero_();
}

MlmOutput MaskedLmImpl::score(const torch::Tensor& logits, const torch::Tensor& labels,
                              bool return_logits) const {
  // Padded columns are never predicted or counted: the loss reads the real ones only.
  const auto loss = kernels::masked_lm_loss(logits, vocab_size_, labels);
  MlmOutput out;
  out.mlm_loss_sum = loss.loss_sum;
  out.mlm_correct = loss.correct;
  if (return_logits) out.mlm_logits = logits.narrow(1, 0, vocab_size_).to(torch::kFloat32);
  return out;
}

void save_model_pt(MaskedLm model, const std::string& path) {
  write_tensor_file(path, model->hf_state_dict());
}

void load_model_pt(MaskedLm model, const std::string& path) {
  model->load_hf_state_dict(read_tensor_file(path), path);
}

torch::Tensor attention_bias_for(const MlmInputs& in, const config::ModelConfig& config) {
  const torch::Tensor mask = in.has_padding ? in.attention_mask : torch::Tensor();
  if (!config.attend_across_documents && in.document_ids.defined()) {
    TORCH_CHECK(in.document_ids.sizes() == in.input_ids.sizes(), "document_ids ", in.document_ids.sizes(),
                " and input_ids ", in.input_ids.sizes(), " differ in shape");
    return attention_bias_from_allowed(same_document_mask(in.document_ids, mask),
                                       compute_dtype(in.input_ids.device()));
  }
  return mask.defined() ? attention_bias_from_mask(mask) : torch::Tensor();
}

TokenLayout token_layout_for(const MlmInputs& in, const config::ModelConfig& config) {
  const bool documents = !config.attend_across_documents && in.document_ids.defined();
  return TokenLayout::of(in.attention_mask, in.has_padding, documents ? in.document_ids : torch::Tensor(),
                         in.layout_counts);
}

SelectedPositions SelectedPositions::from_flat(const torch::Tensor& flat, int64_t batch, int64_t seq,
                                              int64_t known_width) {
  // flat = b*S + s, ascending: a position's slot j within its row is its index minus the
  // number of positions in earlier rows.
  const auto row = flat.div(seq, /*rounding_mode=*/"floor");
  const auto column = flat - row * seq;
  // index_add, not bincount: CUDA's bincount reads the largest index back to size its output.
  const auto counts = torch::zeros({batch}, flat.options()).index_add_(0, row, torch::ones_like(row));
  // The width shapes the gather: the caller's when it knows it, else one read of the device.
  const int64_t width = std::max<int64_t>(1, known_width >= 0 ? known_width : counts.max().item<int64_t>());
  const auto first = counts.cumsum(0) - counts;
  const auto slot = torch::arange(flat.numel(), flat.options()) - first.gather(0, row);
  SelectedPositions out;
  out.rows = row * width + slot;
  // Structured ops only (gather, scatter): they run on meta tensors, the test that no host
  // read hides here (tests/train/step_host_reads_test.cpp).
  out.positions = torch::zeros({batch * width}, flat.options()).scatter_(0, out.rows, column).view({batch, width});
  return out;
}

int64_t count_parameters(torch::nn::Module& module) {
  std::unordered_set<const void*> seen;
  int64_t total = 0;
  for (const auto& p : module.parameters()) {
    if (seen.insert(p.unsafeGetTensorImpl()).second) total += p.numel();
  }
  return total;
}

}  // namespace mlm::model
