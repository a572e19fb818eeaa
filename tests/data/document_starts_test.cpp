// PackedSequence::document_starts (model.attend_across_documents: false) agrees with the packed
// text: walking the corpus along the sequences, a document starts right after each [SEP] that
// joins it to the one before, for sentence and token packing, streamed and from a prepared
// store. A sequence that holds one document (cross_documents false, every NSP/SOP pair) has
// none.
#include <gtest/gtest.h>

#include <filesystem>

#include "data/sentence_corpus.h"
#include "data/store_fixture.h"
#include "mlm/config/run_config.h"
#include "mlm/data/store/prepared_dataset.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data::document_starts_test {

using mlm::testing::fixture_tokenizer;
using Ids = std::vector<int32_t>;
using config::resolve_data_plan;

/// The corpus's documents as one token run each, walked along the sequences packed from them
/// in order; the document starts of each sequence come from where its text crosses a
/// document's end, independently of the packer's bookkeeping.
class DocumentWalk {
 public:
  DocumentWalk(const mlm::testing::SentenceCorpus& corpus, text::SpecialIds ids) : ids_(ids) {
    for (const auto& doc : corpus.docs) {
      docs_.emplace_back();
      for (const auto& sentence : doc) docs_.back().insert(docs_.back().end(), sentence.begin(), sentence.end());
    }
  }

  /// The starts of the next sequence's documents after its first; a failure if its text is
  /// not the corpus's next text.
  std::vector<int32_t> starts_of(const Ids& seq) {
    std::vector<int32_t> starts;
    if (doc_ < docs_.size() && offset_ == docs_[doc_].size()) next_document();  // began with one
    for (size_t i = 1; i + 1 < seq.size(); ++i) {
      if (doc_ >= docs_.size()) {
        ADD_FAILURE() << "the sequences run past the corpus";
        return starts;
      }
      if (offset_ == docs_[doc_].size()) {  // the document ended here: a [SEP] joins the next
        EXPECT_EQ(seq[i], ids_.sep) << "position " << i;
        next_document();
        starts.push_back(static_cast<int32_t>(i + 1));
        continue;
      }
      EXPECT_EQ(seq[i], docs_[doc_][offset_]) << "position " << i << " of document " << doc_;
      ++offset_;
    }
    return starts;
  }

  bool at_end() const { return doc_ + 1 == docs_.size() && offset_ == docs_.back().size(); }

 private:
  void next_document() {
    ++doc_;
    offset_ = 0;
  }

  std::vector<Ids> docs_;
  text::SpecialIds ids_;
  size_t doc_ = 0, offset_ = 0;
};

class DocumentStarts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = mlm::testing::make_temp_dir("document_starts");
    // A long line (60 words) in document 5: longer than a sequence, so it is cut.
    corpus_ = mlm::testing::write_sentence_corpus(dir_, "corpus.txt", fixture_tokenizer(), 120, 17, 5, 60);
    mlm::testing::StoreSplit split;
    split.shards.push_back(corpus_.docs);
    mlm::testing::StoreFixture f;
    f.fingerprint = tokenizer_fingerprint(fixture_tokenizer());
    mlm::testing::write_store(dir_ / "store", f, split, split);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  config::RunConfig config(bool prepared, config::Packing packing) const {
    config::RunConfig c;
    if (prepared) {
      c.data.store = (dir_ / "store").string();
    } else {
      c.data.train_files = {corpus_.path};
      c.data.valid_files = {corpus_.path};
    }
    c.data.packing = packing;
    c.data.seq_len = 40;
    c.data.shuffle_buffer = 1;
    c.data.num_workers = 0;
    c.train.seed = 3;
    return c;
  }

  /// Every valid sequence, in order.
  static std::vector<PackedSequence> all_valid(const config::RunConfig& c) {
    std::unique_ptr<SequenceSource> source;
    if (c.data.store.empty()) {
      source = std::make_unique<StreamingDataset>(resolve_data_plan(c), fixture_tokenizer(),
                                                  Split::valid);
    } else {
      source = std::make_unique<PreparedDataset>(resolve_data_plan(c), fixture_tokenizer(),
                                                 Split::valid);
    }
    std::vector<PackedSequence> out;
    PackedSequence s;
    while (source->next(s)) out.push_back(s);
    return out;
  }

  std::filesystem::path dir_;
  mlm::testing::SentenceCorpus corpus_;
};

std::string describe(bool prepared, config::Packing packing) {
  return std::string(prepared ? "prepared" : "streamed") + ", " + std::string(config::to_string(packing));
}

TEST_F(DocumentStarts, FollowEachJoiningSepAcrossDocuments) {
  for (bool prepared : {false, true}) {
    for (auto packing : {config::Packing::sentences, config::Packing::tokens}) {
      SCOPED_TRACE(describe(prepared, packing));
      const auto seqs = all_valid(config(prepared, packing));
      ASSERT_GT(seqs.size(), 30u);
      DocumentWalk walk(corpus_, fixture_tokenizer().vocab().ids);
      size_t joined = 0;
      for (size_t i = 0; i < seqs.size(); ++i) {
        const auto want = walk.starts_of(seqs[i].ids);
        ASSERT_EQ(seqs[i].document_starts, want) << "sequence " << i;
        joined += want.size();
      }
      EXPECT_TRUE(walk.at_end());
      EXPECT_GT(joined, 20u) << "documents (about 78 tokens) should often join in 40-token sequences";
    }
  }
}

TEST_F(DocumentStarts, NoneWithinDocumentsOrInSentencePairs) {
  for (bool prepared : {false, true}) {
    for (auto packing : {config::Packing::sentences, config::Packing::tokens}) {
      SCOPED_TRACE(describe(prepared, packing));
      auto apart = config(prepared, packing);
      apart.data.cross_documents = false;
      const auto seqs = all_valid(apart);
      ASSERT_GT(seqs.size(), 30u);
      for (const auto& s : seqs) EXPECT_TRUE(s.document_starts.empty());
      for (auto objective : {config::Objective::nsp, config::Objective::sop}) {
        auto pairs = config(prepared, packing);
        pairs.model.objective = objective;
        const auto pair_seqs = all_valid(pairs);
        ASSERT_GT(pair_seqs.size(), 30u);
        for (const auto& s : pair_seqs) {
          EXPECT_NE(s.nsp_label, -1);
          EXPECT_TRUE(s.document_starts.empty()) << "A and B are one example";
        }
      }
    }
  }
}

}  // namespace mlm::data::document_starts_test
