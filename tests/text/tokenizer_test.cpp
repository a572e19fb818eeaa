#include <gtest/gtest.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <fstream>

#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

namespace mlm::text {
namespace {

using mlm::testing::corpus_path;
using mlm::testing::fixture_tokenizer;
using mlm::testing::make_temp_dir;

TEST(Tokenizer, SpecialPiecesHaveFixedIds) {
  const auto& t = fixture_tokenizer();
  const auto& v = t.vocab();
  EXPECT_EQ(v.size, 200);
  EXPECT_EQ(v.ids.pad, 0);
  EXPECT_EQ(v.ids.unk, 1);
  EXPECT_EQ(v.ids.cls, 2);
  EXPECT_EQ(v.ids.sep, 3);
  EXPECT_EQ(v.ids.mask, 4);
  EXPECT_EQ(t.id_to_piece(0), "[PAD]");
  EXPECT_EQ(t.id_to_piece(1), "[UNK]");
  EXPECT_EQ(t.id_to_piece(2), "[CLS]");
  EXPECT_EQ(t.id_to_piece(3), "[SEP]");
  EXPECT_EQ(t.id_to_piece(4), "[MASK]");
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(v.is_special[i]) << i;
  int specials = 0;
  for (auto s : v.is_special) specials += s;
  EXPECT_EQ(specials, 5);
}

TEST(Tokenizer, EncodeDecodeRoundTrip) {
  const auto& t = fixture_tokenizer();
  const std::string text = "The old farmer visited the wooden bridge before the storm arrived.";
  std::vector<int32_t> ids = {99, 98};
  t.encode(text, ids);
  ASSERT_FALSE(ids.empty());
  for (int32_t id : ids) {
    EXPECT_GE(id, 5);
    EXPECT_LT(id, 200);
  }
  EXPECT_EQ(t.decode(ids), text);
  EXPECT_TRUE(t.vocab().starts_word[ids[0]]);  // "▁The..." begins a word
  EXPECT_EQ(t.vocab().starts_word[ids[0]],
            t.id_to_piece(ids[0]).rfind("\xE2\x96\x81", 0) == 0);
  // Control pieces in the text are not produced by encoding.
  EXPECT_EQ(t.encode("").size(), 0u);
}

TEST(Tokenizer, LongTextEncodesLikeOneCall) {
  const auto& t = fixture_tokenizer();
  std::string text;
  while (text.size() < 200 * 1024) text += "A clever student measured the stone tower with great care. ";
  const auto ids = t.encode(text);
  // Pieces never span whitespace, so the chunked encoding equals the sum of its sentences.
  const auto one = t.encode("A clever student measured the stone tower with great care.");
  ASSERT_EQ(ids.size() % one.size(), 0u);
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], one[i % one.size()]) << i;
}

TEST(Tokenizer, SerializedModelRoundTrip) {
  const auto& t = fixture_tokenizer();
  const auto copy = Tokenizer::from_serialized(t.serialized_model(), "checkpoint");
  EXPECT_EQ(copy.vocab().size, t.vocab().size);
  EXPECT_EQ(copy.encode("a hungry fox sold the stone tower"),
            t.encode("a hungry fox sold the stone tower"));
}

TEST(Tokenizer, TrainBpeLowercaseFromJsonlAndGzip) {
  const auto dir = make_temp_dir("tok_bpe");
  auto c = mlm::testing::small_tokenizer_config((dir / "sub" / "bpe.model").string());
  c.type = config::TokenizerType::bpe;
  c.lowercase = true;
  c.byte_fallback = true;
  c.vocab_size = 300;
  Tokenizer::train(c, {corpus_path("docs.jsonl"), corpus_path("docs.jsonl.gz"), corpus_path("blocks.txt.gz")});
  const auto t = Tokenizer::load(c.model);
  EXPECT_EQ(t.model_path(), c.model);
  EXPECT_EQ(t.vocab().ids.mask, 4);
  EXPECT_EQ(t.decode(t.encode("The Old Farmer")), "the old farmer");
  // Byte fallback: an unseen character becomes byte pieces, not [UNK].
  const auto ids = t.encode("\xE2\x82\xAC");  // the euro sign
  for (int32_t id : ids) EXPECT_NE(id, t.vocab().ids.unk);
  EXPECT_FALSE(std::filesystem::exists(c.model + ".tmp"));
  std::filesystem::remove_all(dir);
}

TEST(Tokenizer, ModelWithoutSpecialPiecesIsRejected) {
  const auto dir = make_temp_dir("tok_plain");
  const std::string prefix = (dir / "plain").string();
  // A model trained by plain sentencepiece: <unk> <s> </s>, none of ours.
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + corpus_path("train.txt") + " --model_prefix=" + prefix +
      " --vocab_size=100 --minloglevel=2");
  ASSERT_TRUE(status.ok()) << status.ToString();
  try {
    Tokenizer::load(prefix + ".model");
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(prefix + ".model"), std::string::npos) << what;
    for (const char* piece : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
      EXPECT_NE(what.find(piece), std::string::npos) << what;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(Tokenizer, UnreadableOrCorruptModel) {
  EXPECT_THROW(Tokenizer::load("/nonexistent/spm.model"), DataError);
  const auto dir = make_temp_dir("tok_bad");
  const auto path = (dir / "bad.model").string();
  std::ofstream(path) << "this is not a protobuf";
  EXPECT_THROW(Tokenizer::load(path), DataError);
  std::filesystem::remove_all(dir);
}

TEST(Tokenizer, EnsureTokenizerTrainsLoadsOrRefuses) {
  const auto dir = make_temp_dir("tok_ensure");
  auto tokenizer = mlm::testing::small_tokenizer_config((dir / "spm.model").string());
  config::DataConfig data;
  data.train_files = {corpus_path("train.txt")};
  tokenizer.train_if_missing = false;
  try {
    load_or_train_tokenizer(tokenizer, data);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "tokenizer.model");
  }
  tokenizer.train_if_missing = true;
  const auto trained = load_or_train_tokenizer(tokenizer, data);
  EXPECT_TRUE(std::filesystem::exists(tokenizer.model));
  const auto loaded = load_or_train_tokenizer(tokenizer, data);
  EXPECT_EQ(loaded.serialized_model(), trained.serialized_model());
  // Training is deterministic: the same corpus and settings give the same model.
  EXPECT_EQ(trained.serialized_model(), fixture_tokenizer().serialized_model());
  std::filesystem::remove_all(dir);
}

TEST(Tokenizer, TrainingRejectsBadSettingsAndFiles) {
  const auto dir = make_temp_dir("tok_reject");
  auto c = mlm::testing::small_tokenizer_config((dir / "m.model").string());
  c.vocab_size = 100000;  // far more pieces than the fixture corpus has
  EXPECT_THROW(Tokenizer::train(c, {corpus_path("train.txt")}), ConfigError);
  c.vocab_size = 200;
  EXPECT_THROW(Tokenizer::train(c, {corpus_path("missing.txt")}), DataError);
  EXPECT_THROW(Tokenizer::train(c, {corpus_path("*.none")}), DataError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlm::text
