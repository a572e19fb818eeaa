#pragma once
// A collated, masked training batch: plain row-major arrays, [batch_size x seq_len] unless
// noted. The trainer turns them into tensors; nothing here depends on LibTorch.
#include <cstdint>
#include <vector>

namespace mlm::masking {

struct MaskedBatch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  std::vector<int64_t> input_ids;         // corrupted ids ([MASK] / random / kept)
  std::vector<int64_t> token_type_ids;
  std::vector<int64_t> attention_mask;    // 1 = real token, 0 = padding
  std::vector<int64_t> labels;            // original id at selected positions, -100 elsewhere
  std::vector<int64_t> masked_positions;  // ascending flat indices b*seq_len+s of selected
  std::vector<int64_t> nsp_labels;        // [batch_size]; empty unless objective nsp/sop
  std::vector<int64_t> document_ids;      // empty unless the collator records documents
                                          // (model.attend_across_documents: false): per token
                                          // 1 + its document's index in the row, 0 = padding

  int64_t num_masked() const { return static_cast<int64_t>(masked_positions.size()); }
  bool has_padding() const {
    for (auto m : attention_mask) if (m == 0) return true;
    return false;
  }
};

}  // namespace mlm::masking
