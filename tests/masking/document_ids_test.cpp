// MaskedBatch::document_ids: filled only when the collator is asked to (model.
// attend_across_documents: false), 1 + the document's index in its row from each sequence's
// document_starts, 0 on padding; the masking itself does not change; bad starts are a bug
// upstream.
#include <gtest/gtest.h>

#include <stdexcept>

#include "masking/masking_test_util.h"
#include "mlm/masking/masking_collator.h"

namespace mlm::masking::document_ids_test {

using config::MaskingConfig;
using config::Objective;
using testing::make_vocab;

data::PackedSequence sequence(std::vector<int32_t> ids, std::vector<int32_t> starts, uint64_t sample_id) {
  data::PackedSequence s;
  s.ids = std::move(ids);
  s.token_type_ids.assign(s.ids.size(), 0);
  s.document_starts = std::move(starts);
  s.sample_id = sample_id;
  return s;
}

TEST(CollatorDocumentIds, NumberTheDocumentsOfEachRowAndZeroThePadding) {
  constexpr int64_t kLen = 10;
  //                    [CLS] d1   d1  [SEP] d2  [SEP] d3   d3  [SEP]
  const auto three = sequence({2, 10, 11, 3, 12, 3, 13, 14, 3}, {4, 6}, 7);
  const auto one = sequence({2, 20, 21, 22, 3}, {}, 8);
  const MaskingCollator with_ids(MaskingConfig{}, make_vocab(), kLen, Objective::mlm, true);
  const auto batch = with_ids({three, one}, 5);
  const std::vector<int64_t> want = {1, 1, 1, 1, 2, 2, 3, 3, 3, 0,  //
                                     1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
  EXPECT_EQ(batch.document_ids, want);

  // The same batch otherwise, and nothing extra without the option.
  const MaskingCollator without(MaskingConfig{}, make_vocab(), kLen, Objective::mlm);
  const auto plain = without({three, one}, 5);
  EXPECT_TRUE(plain.document_ids.empty());
  EXPECT_EQ(plain.input_ids, batch.input_ids);
  EXPECT_EQ(plain.labels, batch.labels);
  EXPECT_EQ(plain.attention_mask, batch.attention_mask);
}

TEST(CollatorDocumentIds, StartsOutsideTheSequenceOrOutOfOrderAreInvalidArgument) {
  const MaskingCollator collate(MaskingConfig{}, make_vocab(), 10, Objective::mlm, true);
  const std::vector<int32_t> ids = {2, 10, 11, 3, 12, 3};
  EXPECT_NO_THROW(collate({sequence(ids, {4}, 1)}, 0));
  for (const std::vector<int32_t>& bad : std::vector<std::vector<int32_t>>{{0}, {6}, {-1}, {4, 4}, {4, 2}}) {
    EXPECT_THROW(collate({sequence(ids, bad, 1)}, 0), std::invalid_argument) << ::testing::PrintToString(bad);
  }
}

}  // namespace mlm::masking::document_ids_test
