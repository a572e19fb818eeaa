#pragma once
// One packed sequence as the streaming dataset yields it, before masking.
#include <cstdint>
#include <vector>

namespace mlm::data {

struct PackedSequence {
  std::vector<int32_t> ids;            // [CLS] ... [SEP] (or [CLS] A [SEP] B [SEP]); <= seq_len
  std::vector<int8_t> token_type_ids;  // same length; 0 for A, 1 for B; all 0 without NSP/SOP
  int8_t nsp_label = -1;               // NSP: 1 = B is random; SOP: 1 = swapped; -1 = none
  uint64_t sample_id = 0;              // index in the global stream (all ranks, all epochs):
                                       // the masking seed, so each visit gets a fresh mask
                                       // and a sequence gets the same mask on any world size
  // Where each document after the first starts (ascending offsets into ids), for
  // model.attend_across_documents: false. [CLS] belongs to the first document and the [SEP]
  // between two documents to the one it ends, so a document starts right after that [SEP].
  // Empty: the sequence is one document (cross_documents false, and every NSP/SOP pair: A and
  // B are one example, even when an NSP negative B was drawn from another document).
  std::vector<int32_t> document_starts;
};

}  // namespace mlm::data
