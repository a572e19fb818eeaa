// data.packing: sentences. A sequence ends at a sentence end (a line), except that a single
// sentence longer than a sequence is cut; sequences are as full as that allows; NSP/SOP cut A
// and B at sentence ends, label half the pairs, and draw NSP negatives from other documents.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "data/sequence_checks.h"
#include "data/sentence_corpus.h"
#include "mlm/config/run_config.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "text/tokenizer_fixture.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// streaming_dataset_test.cpp, whose helpers have the same names.
namespace mlm::data::sentence_packing {

using mlm::testing::SentenceCorpus;
using mlm::testing::fixture_tokenizer;
using mlm::testing::take;
using Ids = std::vector<int32_t>;
using config::resolve_data_plan;

class SentencePacking : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = mlm::testing::make_temp_dir("sentence_packing"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  config::RunConfig config_for(const SentenceCorpus& corpus) const {
    config::RunConfig c;
    c.data.train_files = {corpus.path};
    c.data.valid_files = {corpus.path};
    c.data.seq_len = kSeqLen;
    c.data.shuffle_buffer = 1;
    c.data.num_workers = 2;
    c.train.seed = 5;
    return c;
  }

  static constexpr int64_t kSeqLen = 48;
  std::filesystem::path dir_;
};

/// The sentence packing rule written out plainly: whole sentences, documents joined by [SEP],
/// a sentence that does not fit starts the next sequence, a sentence longer than a sequence
/// is cut.
std::vector<Ids> reference_packing(const SentenceCorpus& corpus, int64_t seq_len, const text::SpecialIds& ids) {
  const size_t capacity = static_cast<size_t>(seq_len - 2);
  std::vector<Ids> out;
  Ids body;
  auto flush = [&] {
    Ids seq{ids.cls};
    seq.insert(seq.end(), body.begin(), body.end());
    seq.push_back(ids.sep);
    out.push_back(seq);
    body.clear();
  };
  for (const auto& doc : corpus.docs) {
    bool doc_start = true;
    for (const auto& sentence : doc) {
      size_t from = 0;
      while (from < sentence.size()) {
        const bool joins = doc_start && !body.empty();
        const size_t room = capacity - body.size() - (joins ? 1 : 0);
        size_t take = sentence.size() - from;
        if (take > room) {
          if (!body.empty()) {
            flush();
            continue;
          }
          take = room;
        }
        if (joins) body.push_back(ids.sep);
        body.insert(body.end(), sentence.begin() + from, sentence.begin() + from + take);
        from += take;
        doc_start = false;
        if (body.size() == capacity) flush();
      }
    }
  }
  if (!body.empty()) flush();
  return out;
}

TEST_F(SentencePacking, SequencesEndAtSentenceEndsAndAreAsFullAsAllowed) {
  const auto& tok = fixture_tokenizer();
  const auto corpus = mlm::testing::write_sentence_corpus(dir_, "c.txt", tok, 40, 1, /*long_line_doc=*/7);
  for (const auto& doc : corpus.docs) {
    for (const auto& line : doc) {
      ASSERT_EQ(line.back(), corpus.dot) << "every line must end in the same '.' piece";
      ASSERT_EQ(std::count(line.begin(), line.end(), corpus.dot), 1) << "'.' only at line ends";
    }
  }
  ASSERT_GT(corpus.docs[7][1].size(), static_cast<size_t>(kSeqLen)) << "the long line must need a cut";
  auto c = config_for(corpus);
  StreamingDataset ds(resolve_data_plan(c), tok, Split::valid);
  const auto seqs = take(ds, SIZE_MAX);
  const auto& ids = tok.vocab().ids;
  int64_t cuts = 0, joined = 0;
  for (const auto& s : seqs) {
    ASSERT_LE(s.ids.size(), static_cast<size_t>(kSeqLen));
    ASSERT_EQ(s.ids.front(), ids.cls);
    ASSERT_EQ(s.ids.back(), ids.sep);
    // Every part (between [CLS], inner [SEP]s and the last [SEP]) ends at a sentence end,
    // unless the sequence is one full piece of an over-long sentence.
    const bool ends_at_sentence = s.ids[s.ids.size() - 2] == corpus.dot;
    if (!ends_at_sentence) {
      ++cuts;
      EXPECT_EQ(s.ids.size(), static_cast<size_t>(kSeqLen)) << "only a cut sentence ends elsewhere";
      EXPECT_EQ(std::count(s.ids.begin() + 1, s.ids.end() - 1, ids.sep), 0);
    }
    for (size_t k = 2; k + 1 < s.ids.size(); ++k) {
      if (s.ids[k] == ids.sep) {
        ++joined;
        EXPECT_EQ(s.ids[k - 1], corpus.dot) << "a document joins after a sentence end";
      }
    }
  }
  EXPECT_GE(cuts, 1);
  EXPECT_GT(joined, 0);
  // Exactly the greedy rule: as full as whole sentences allow.
  const auto want = reference_packing(corpus, kSeqLen, ids);
  ASSERT_EQ(seqs.size(), want.size());
  for (size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i].ids, want[i]) << "sequence " << i;
}

TEST_F(SentencePacking, TokenPackingStillFillsEverySequence) {
  const auto& tok = fixture_tokenizer();
  const auto corpus = mlm::testing::write_sentence_corpus(dir_, "c.txt", tok, 40, 1);
  auto c = config_for(corpus);
  c.data.packing = config::Packing::tokens;
  StreamingDataset ds(resolve_data_plan(c), tok, Split::valid);
  const auto seqs = take(ds, SIZE_MAX);
  int64_t mid_sentence = 0;
  for (size_t i = 0; i + 1 < seqs.size(); ++i) {
    EXPECT_GE(seqs[i].ids.size(), static_cast<size_t>(kSeqLen - 1));  // full, or one short
    mid_sentence += seqs[i].ids[seqs[i].ids.size() - 2] != corpus.dot;
  }
  EXPECT_GT(mid_sentence, static_cast<int64_t>(seqs.size()) / 2);  // the difference shows
}

TEST_F(SentencePacking, DocumentsApartEndAtTheirLastSentence) {
  const auto& tok = fixture_tokenizer();
  const auto corpus = mlm::testing::write_sentence_corpus(dir_, "c.txt", tok, 40, 2);
  auto c = config_for(corpus);
  c.data.cross_documents = false;
  StreamingDataset ds(resolve_data_plan(c), tok, Split::valid);
  const auto seqs = take(ds, SIZE_MAX);
  size_t doc = 0, line = 0;  // walk the corpus along the sequences
  for (const auto& s : seqs) {
    ASSERT_EQ(std::count(s.ids.begin(), s.ids.end(), tok.vocab().ids.sep), 1);
    const Ids body(s.ids.begin() + 1, s.ids.end() - 1);
    Ids want;
    while (line < corpus.docs[doc].size() &&
           want.size() + corpus.docs[doc][line].size() <= static_cast<size_t>(kSeqLen - 2)) {
      want.insert(want.end(), corpus.docs[doc][line].begin(), corpus.docs[doc][line].end());
      ++line;
    }
    ASSERT_EQ(body, want);
    if (line == corpus.docs[doc].size()) ++doc, line = 0;
  }
  EXPECT_EQ(doc, corpus.docs.size());
}

// One pair, split back into its sentence-ordered halves.
struct Pair {
  Ids a, b;
  int8_t label;
};

Pair split_pair(const PackedSequence& s, int32_t sep) {
  const auto first_sep = std::find(s.ids.begin() + 1, s.ids.end(), sep);
  return {Ids(s.ids.begin() + 1, first_sep), Ids(first_sep + 1, s.ids.end() - 1), s.nsp_label};
}

/// The document holding `part` as a contiguous run of one line, if exactly one does.
std::optional<size_t> doc_of(const SentenceCorpus& corpus, const Ids& part) {
  std::optional<size_t> found;
  for (size_t d = 0; d < corpus.docs.size(); ++d) {
    for (const auto& line : corpus.docs[d]) {
      if (std::search(line.begin(), line.end(), part.begin(), part.end()) != line.end()) {
        if (found && *found != d) return std::nullopt;
        found = d;
      }
    }
  }
  return found;
}

/// The first sentence (or fragment) of `ids`: up to and including the first '.'.
Ids first_piece(const Ids& ids, int32_t dot) {
  const auto end = std::find(ids.begin(), ids.end(), dot);
  return Ids(ids.begin(), end == ids.end() ? end : end + 1);
}

Ids last_piece(const Ids& ids, int32_t dot) {
  auto begin = ids.end() - 1;
  while (begin != ids.begin() && *(begin - 1) != dot) --begin;
  return Ids(begin, ids.end());
}

void check_pairs(config::Objective objective, const SentenceCorpus& corpus, config::RunConfig c,
                 const text::Tokenizer& tok) {
  SCOPED_TRACE(std::string(config::to_string(objective)));
  c.model.objective = objective;
  StreamingDataset ds(resolve_data_plan(c), tok, Split::train);
  const size_t n = 3000;
  const auto seqs = take(ds, n);
  ASSERT_GT(ds.epoch(), 1) << "several epochs";
  const int64_t capacity = c.data.seq_len - 3;
  int64_t ones = 0, inside = 0, whole = 0, negatives = 0, next_doc = 0, identified = 0;
  std::map<int64_t, int64_t> offsets;
  for (const auto& s : seqs) {
    ASSERT_LE(s.ids.size(), static_cast<size_t>(c.data.seq_len));
    ASSERT_EQ(std::count(s.ids.begin(), s.ids.end(), tok.vocab().ids.sep), 2);
    Pair p = split_pair(s, tok.vocab().ids.sep);
    ASSERT_FALSE(p.a.empty());
    ASSERT_FALSE(p.b.empty());
    ASSERT_TRUE(p.label == 0 || p.label == 1);
    ones += p.label;
    const bool random_b = objective == config::Objective::nsp && p.label == 1;
    if (objective == config::Objective::sop && p.label == 1) std::swap(p.a, p.b);  // text order
    // A ends at a sentence end, or the span was a single sentence cut inside.
    const auto dots_in_a = std::count(p.a.begin(), p.a.end(), corpus.dot);
    if (p.a.back() == corpus.dot) {
      ++whole;
    } else {
      ++inside;
      ASSERT_EQ(dots_in_a, 0) << "A is cut inside its only sentence";
    }
    if (!random_b) {
      // B is the rest of the span: whole sentences (the tail of A's sentence when cut inside).
      ASSERT_EQ(p.b.back(), corpus.dot);
      if (p.a.back() != corpus.dot) ASSERT_EQ(std::count(p.b.begin(), p.b.end(), corpus.dot), 1);
      // As full as whole sentences allow: the document's next line would not have fit.
      const auto at = corpus.where.find(last_piece(p.b, corpus.dot));
      if (at != corpus.where.end()) {
        const auto [d, l] = at->second;
        if (l + 1 < corpus.docs[d].size()) {
          EXPECT_GT(static_cast<int64_t>(p.a.size() + p.b.size() + corpus.docs[d][l + 1].size()), capacity);
        }
      }
      continue;
    }
    // NSP negative: B starts at a sentence start of another document and ends at a sentence
    // end, unless its first sentence alone had to be cut to the room left.
    ++negatives;
    ASSERT_TRUE(p.b.back() == corpus.dot || static_cast<int64_t>(p.a.size() + p.b.size()) == capacity);
    const auto b_first = first_piece(p.b, corpus.dot);
    if (b_first.back() == corpus.dot) ASSERT_TRUE(corpus.where.count(b_first)) << "B starts a sentence";
    const auto doc_a = doc_of(corpus, first_piece(p.a, corpus.dot));
    const auto doc_b = doc_of(corpus, b_first);
    if (doc_a && doc_b) {
      ++identified;
      ASSERT_NE(*doc_a, *doc_b) << "a negative comes from another document";
      const auto offset = static_cast<int64_t>(*doc_b) - static_cast<int64_t>(*doc_a);
      EXPECT_GT(offset, 0);
      EXPECT_LE(offset, static_cast<int64_t>(kNegativeWindow));
      ++offsets[offset];
      next_doc += offset == 1;
    }
  }
  // Labels: P(1) = 1/2 per pair (NSP: a little less at epoch ends, where no document follows;
  // a little more from lone tokens). n = 3000: sd = sqrt(n)/2 ~ 27; allow 5 sd.
  const double sd = std::sqrt(static_cast<double>(n)) / 2;
  EXPECT_LT(std::abs(static_cast<double>(ones) - n / 2.0), 5 * sd) << ones << " of " << n;
  // Every line of this corpus fits in a pair with the line before it, so no pair is cut
  // inside a sentence (OneLineDocumentsStillMakePairs has the inside cuts).
  EXPECT_EQ(inside, 0) << whole << " cut between sentences";
  if (objective == config::Objective::nsp) {
    ASSERT_GT(identified, negatives / 2) << "most negatives' documents are identified";
    // Uniform over the next 16 documents: the next one ~1/16 of the time, far from always.
    EXPECT_LT(next_doc, identified / 4) << next_doc << " of " << identified;
    EXPECT_GE(offsets.size(), 8u);
  }
}

TEST_F(SentencePacking, SentencePairsCutAtSentenceEndsWithBalancedLabels) {
  const auto& tok = fixture_tokenizer();
  const auto corpus = mlm::testing::write_sentence_corpus(dir_, "c.txt", tok, 60, 3);
  auto c = config_for(corpus);
  c.data.seq_len = 128;
  c.data.shuffle_files = false;
  c.data.shuffle_buffer = 32;
  for (auto objective : {config::Objective::nsp, config::Objective::sop}) check_pairs(objective, corpus, c, tok);
}

TEST_F(SentencePacking, OneLineDocumentsStillMakePairs) {
  // doc_separator: line makes every document one sentence: pairs are cut inside it.
  const auto& tok = fixture_tokenizer();
  auto c = config_for(mlm::testing::write_sentence_corpus(dir_, "c.txt", tok, 30, 4));
  c.data.doc_separator = config::DocSeparator::line;
  for (auto objective : {config::Objective::nsp, config::Objective::sop}) {
    c.model.objective = objective;
    StreamingDataset ds(resolve_data_plan(c), tok, Split::train);
    const auto seqs = take(ds, 400);
    int64_t ones = 0;
    for (const auto& s : seqs) ones += s.nsp_label;
    ASSERT_EQ(seqs.size(), 400u);
    EXPECT_GT(ones, 400 / 2 - 50) << config::to_string(objective);  // sd 10: 5 sd
    EXPECT_LT(ones, 400 / 2 + 50) << config::to_string(objective);
  }
}

}  // namespace mlm::data::sentence_packing
