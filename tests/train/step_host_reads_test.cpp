// The shapes a step takes from its data are sized on the host, tested without a GPU: a meta
// tensor has a shape and no data, so anything that reads one on the host (.item(), nonzero()
// without a size, .cpu(), data_ptr) throws. A batch uploaded to the meta device then runs
// what used to read the device back (the unpadded layout and its variable-length segments, the
// sparse head's gather width): the CPU-only proxy of
// CudaStepReads.TheForwardAndBackwardNeverWaitForTheDevice, which runs whole steps under CUDA's
// sync debug mode. The host's counts that make this possible are checked against what the
// device would have read.
#include <gtest/gtest.h>

#include "mlm/model/token_layout.h"
#include "mlm/train/loop/batch_tensors.h"
#include "padded_batches.h"

namespace mlm::train {
namespace {

constexpr int64_t kVocab = 97;

config::ModelConfig small(config::Architecture architecture, bool documents) {
  config::ModelConfig c;
  c.architecture = architecture;
  c.hidden_size = 32;
  c.num_attention_heads = 2;
  c.intermediate_size = 48;
  c.num_hidden_layers = 3;
  c.max_position_embeddings = 64;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.attend_across_documents = !documents;
  if (architecture == config::Architecture::modernbert) {
    c.local_attention = 8;
    c.global_attn_every_n_layers = 2;
    c.mlp_dropout = 0.0;
    c.embedding_dropout = 0.0;
  }
  return c;
}

const std::vector<int64_t> kLengths{64, 40, 20, 64, 10, 33, 50, 7};  // 288 tokens of 512 positions

TEST(HostReads, TheHostCountsWhatTheModelWouldReadBack) {
  const auto batch = testing::padded_batch(kLengths, 64, kVocab, /*documents=*/true);
  const auto in = to_bert_inputs(batch, torch::kCPU);
  EXPECT_EQ(in.layout_counts.tokens, in.attention_mask.sum().item<int64_t>());
  EXPECT_EQ(in.max_selected_in_row, 21);  // s % 3 == 1 for s < 64
  // The runs the layout finds on the device: the host's count sizes the same segments.
  const auto read = model::TokenLayout::of(in.attention_mask, true, in.document_ids);
  const auto counted = model::TokenLayout::of(in.attention_mask, true, in.document_ids, in.layout_counts);
  ASSERT_TRUE(read.unpadded());
  EXPECT_EQ(in.layout_counts.segments, read.segments().cu_seqlens.numel() - 2) << "less 0 and the padding rows";
  EXPECT_TRUE(torch::equal(counted.segments().cu_seqlens, read.segments().cu_seqlens));
  const auto selected = model::SelectedPositions::from_flat(in.masked_positions, 8, 64);
  const auto known = model::SelectedPositions::from_flat(in.masked_positions, 8, 64, in.max_selected_in_row);
  EXPECT_TRUE(torch::equal(known.positions, selected.positions));
  EXPECT_TRUE(torch::equal(known.rows, selected.rows));
}

TEST(HostReads, TheLayoutAndTheSparseGatherReadNothingBack) {
  for (const bool documents : {false, true}) {
    SCOPED_TRACE(documents ? "documents" : "no documents");
    const auto batch = testing::padded_batch(kLengths, 64, kVocab, documents);
    const auto in = to_bert_inputs(batch, torch::kMeta);
    ASSERT_TRUE(in.input_ids.is_meta() && in.attention_mask.is_meta());
    for (const auto architecture : {config::Architecture::bert, config::Architecture::modernbert}) {
      const auto layout = model::token_layout_for(in, small(architecture, documents));
      ASSERT_TRUE(layout.unpadded()) << "the path under test";
      EXPECT_EQ(layout.positions().size(0), 384) << "288 tokens rounded up to 128 rows";
      EXPECT_EQ(layout.segments().cu_seqlens.numel(), documents ? 17 : 10);  // 0, the runs, the padding rows
      EXPECT_EQ(layout.segments().max_seqlen, 96);  // the 96 padding rows
    }
    const auto selected = model::SelectedPositions::from_flat(in.masked_positions, 8, 64, in.max_selected_in_row);
    EXPECT_EQ(selected.positions.sizes(), (std::vector<int64_t>{8, 21}));
    // Without the host's counts the same code reads the device, and a meta tensor throws.
    auto unknown = in;
    unknown.layout_counts = {};
    EXPECT_ANY_THROW(model::token_layout_for(unknown, small(config::Architecture::bert, documents)))
        << "the proxy detects a host read";
    EXPECT_ANY_THROW(model::SelectedPositions::from_flat(in.masked_positions, 8, 64));
  }
}

}  // namespace
}  // namespace mlm::train
