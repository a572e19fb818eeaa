// Whole-word masking with a WordPiece vocabulary: a word is its head piece and the "##"
// continuations after it, so a selected group covers all of them. The vocabulary is the
// reference's small one (tokenizers' WordPieceTrainer, 400 tokens of the fixture corpus, so
// most words take several pieces; uncased BERT defaults); words are found from the pieces'
// text here, independently of VocabInfo.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlm/config/run_config.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/masking/masking_collator.h"
#include "text/wordpiece_fixture.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// the other masking tests, whose anonymous-namespace helpers have the same names.
namespace mlm::masking::wordpiece_text {

using config::resolve_data_plan;

constexpr int64_t kSeqLen = 128;

const text::Tokenizer& tokenizer() {
  static const auto t = text::Tokenizer::load(
      (mlm::testing::wordpiece_reference_dir() / "small" / "vocab.txt").string());
  return t;
}

const std::vector<data::PackedSequence>& corpus() {
  static const auto seqs = [] {
    config::RunConfig cfg;
    cfg.tokenizer.type = config::TokenizerType::wordpiece;
    cfg.data.train_files = {mlm::testing::corpus_path("train.txt")};
    cfg.data.valid_files = cfg.data.train_files;
    cfg.data.seq_len = kSeqLen;
    cfg.data.num_workers = 1;
    data::StreamingDataset dataset(resolve_data_plan(cfg), tokenizer(), data::Split::valid);
    std::vector<data::PackedSequence> out;
    for (data::PackedSequence seq; dataset.next(seq);) out.push_back(seq);
    return out;
  }();
  return seqs;
}

bool is_bracketed(const std::string& piece) {
  return piece.size() > 2 && piece.front() == '[' && piece.back() == ']';
}

/// Word index of each position (-1: special or padding): a "##" piece continues the word
/// before it, unless a special token came between.
std::vector<int64_t> word_ids(const data::PackedSequence& seq) {
  std::vector<int64_t> out(seq.ids.size(), -1);
  int64_t word = -1;
  bool after_special = true;
  for (size_t i = 0; i < seq.ids.size(); ++i) {
    const std::string piece = tokenizer().id_to_piece(seq.ids[i]);
    if (is_bracketed(piece)) {
      after_special = true;
      continue;
    }
    if (after_special || piece.rfind("##", 0) != 0) ++word;
    out[i] = word;
    after_special = false;
  }
  return out;
}

TEST(WordPieceMasking, VocabTablesAgreeWithThePieces) {
  const auto& vocab = tokenizer().vocab();
  for (int32_t id = 0; id < vocab.size; ++id) {
    const std::string piece = tokenizer().id_to_piece(id);
    EXPECT_EQ(vocab.is_special[id] != 0, is_bracketed(piece)) << id << " " << piece;
    if (!is_bracketed(piece)) {
      EXPECT_EQ(vocab.starts_word[id] != 0, piece.rfind("##", 0) != 0) << id << " " << piece;
    }
  }
}

TEST(WordPieceMasking, WholeWordGroupsCoverAHeadAndAllItsContinuations) {
  config::MaskingConfig cfg;
  cfg.strategy = config::MaskingStrategy::whole_word;
  const MaskingCollator collate(cfg, tokenizer().vocab(), kSeqLen, config::Objective::mlm);
  ASSERT_GE(corpus().size(), 50u);
  int64_t groups = 0, multi_piece_groups = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const MaskedBatch batch = collate(corpus(), seed);
    for (size_t r = 0; r < corpus().size(); ++r) {
      const auto& seq = corpus()[r];
      const auto words = word_ids(seq);
      for (const MaskedSpan& g : collate.select(seq, seed)) {
        ASSERT_GE(words[g.begin], 0) << "row " << r;
        ASSERT_TRUE(g.begin == 0 || words[g.begin - 1] != words[g.begin])
            << "group starts on a continuation, row " << r << " position " << g.begin;
        ASSERT_TRUE(static_cast<size_t>(g.end) == words.size() || words[g.end] != words[g.end - 1])
            << "group leaves out a continuation, row " << r << " position " << g.end;
        ASSERT_EQ(words[g.end - 1], words[g.begin]) << "whole_word groups are one word";
        multi_piece_groups += g.end - g.begin > 1;
        ++groups;
      }
      const int64_t* labels = batch.labels.data() + r * kSeqLen;
      for (size_t s = 1; s < words.size(); ++s) {
        if (words[s] >= 0 && words[s] == words[s - 1]) {
          ASSERT_EQ(labels[s] != -100, labels[s - 1] != -100) << "word split, row " << r;
        }
      }
    }
  }
  // The check means something only if groups of several pieces were drawn.
  EXPECT_GT(groups, 1000);
  EXPECT_GT(multi_piece_groups, 50);
}

}  // namespace mlm::masking::wordpiece_text
