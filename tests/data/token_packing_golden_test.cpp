// data.packing: tokens must keep packing exactly as the packer did before sentence-aware
// packing existed (commit 5103b25): the same sequences, token types, labels and sample ids.
// The pinned values are FNV-1a hashes of the first sequences of the train stream, taken
// from that commit with the fixture tokenizer; a change of the fixture tokenizer (its
// training or the fixture corpus) re-pins them, a change of the packer must not.
#include <gtest/gtest.h>

#include "mlm/config/run_config.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/util/fnv1a.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data::token_packing {  // named: the tests share one unity build

using mlm::testing::corpus_path;
using mlm::testing::fixture_tokenizer;
using config::resolve_data_plan;

/// util's FNV-1a over the little-endian bytes of 64-bit values.
struct Fnv {
  Fnv1a hash;
  void add(uint64_t v) {
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    hash.mix(std::string_view(bytes, 8));
  }
};

uint64_t stream_hash(config::Objective objective, bool cross_documents) {
  config::RunConfig c;
  c.data.train_files = {corpus_path("lines.txt"), corpus_path("blocks.txt.gz"), corpus_path("docs.jsonl"),
                        corpus_path("train.txt")};
  c.data.valid_files = {corpus_path("valid.txt")};
  c.data.seq_len = 40;
  c.data.shuffle_buffer = 8;
  c.data.num_workers = 1;
  c.data.cross_documents = cross_documents;
  c.data.packing = config::Packing::tokens;
  c.model.objective = objective;
  c.train.seed = 11;
  StreamingDataset ds(resolve_data_plan(c), fixture_tokenizer(), Split::train);
  Fnv fnv;
  PackedSequence s;
  for (int i = 0; i < 600 && ds.next(s); ++i) {  // more than one epoch of this corpus
    fnv.add(s.ids.size());
    for (auto id : s.ids) fnv.add(static_cast<uint64_t>(id));
    for (auto t : s.token_type_ids) fnv.add(static_cast<uint64_t>(t));
    fnv.add(static_cast<uint64_t>(s.nsp_label));
    fnv.add(s.sample_id);
  }
  return fnv.hash.value();
}

TEST(TokenPacking, ReproducesThePackerBeforeSentencePacking) {
  const struct {
    config::Objective objective;
    bool cross;
    uint64_t want;
  } cases[] = {
      {config::Objective::mlm, true, 0xace978f37815ed3dull},
      {config::Objective::mlm, false, 0xdff03706a6f045c2ull},
      {config::Objective::nsp, true, 0x01e27a7b2e1aaaf3ull},
      {config::Objective::sop, true, 0xcd4003e91a1604a2ull},
  };
  for (const auto& k : cases) {
    EXPECT_EQ(stream_hash(k.objective, k.cross), k.want)
        << config::to_string(k.objective) << " cross_documents " << k.cross;
  }
}

}  // namespace mlm::data::token_packing
