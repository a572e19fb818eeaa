#pragma once
// What the data tests do with a stream of packed sequences: draw the first n, and check two
// draws are the same sequences (tokens, segments, NSP labels, sample ids).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlm/data/sequence_source.h"

namespace mlm::testing {

/// The next `n` sequences of `source` (fewer when it ends first).
inline std::vector<data::PackedSequence> take(data::SequenceSource& source, size_t n) {
  std::vector<data::PackedSequence> out;
  data::PackedSequence s;
  while (out.size() < n && source.next(s)) out.push_back(s);
  return out;
}

/// `got` and `want` hold the same sequences in the same order; `what` names the draw.
inline void expect_same(const std::vector<data::PackedSequence>& got, const std::vector<data::PackedSequence>& want,
                        const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].ids, want[i].ids) << what << ": sequence " << i;
    ASSERT_EQ(got[i].token_type_ids, want[i].token_type_ids) << what << ": sequence " << i;
    ASSERT_EQ(got[i].nsp_label, want[i].nsp_label) << what << ": sequence " << i;
    ASSERT_EQ(got[i].sample_id, want[i].sample_id) << what << ": sequence " << i;
  }
}

}  // namespace mlm::testing
