// Loading a WordPiece vocabulary (vocab.txt, tokenizer.json, a directory), what the rest of
// the trainer learns of it (VocabInfo, kind, the checkpoint bytes), and one clear DataError
// line naming the file for each kind of bad input. Hand-made vocabularies, so each expected
// piece follows from the WordPiece rules by reading the test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/config_test_util.h"
#include "mlm/text/tokenizer.h"
#include "mlm/text/wordpiece/wordpiece.h"
#include "mlm/text/wordpiece/wordpiece_files.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// the other text tests, whose anonymous-namespace helpers have the same names.
namespace mlm::text::wordpiece_loading {

using TempDir = config::testing::TempDir;

const char* kVocab =
    "[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nun\n##aff\n##able\n##a\nthe\n,\n.\n"
    "cafe\ncafé\n##s\nx\n##x\n我\nhello\n";

std::vector<std::string> pieces(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(t.id_to_piece(id));
  return out;
}

using Pieces = std::vector<std::string>;

// The DataError message of `load`, which must be one line holding every piece.
template <class F>
void expect_data_error(F&& load, const std::vector<std::string>& pieces) {
  try {
    load();
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const auto& piece : pieces) {
      EXPECT_NE(message.find(piece), std::string::npos) << "'" << piece << "' not in: " << message;
    }
  }
}

TEST(WordPieceLoading, VocabTxtWithoutConfigIsUncasedBertWithGreedyLongestMatch) {
  TempDir dir;
  const auto t = Tokenizer::load(dir.write("vocab.txt", kVocab));
  EXPECT_EQ(t.kind(), TokenizerKind::wordpiece);
  EXPECT_EQ(t.size(), 20);
  const auto& ids = t.vocab().ids;
  EXPECT_EQ((std::vector<int32_t>{ids.pad, ids.unk, ids.cls, ids.sep, ids.mask}),
            (std::vector<int32_t>{0, 2, 3, 4, 5}));
  // Lower-cased and accents stripped (strip_accents follows lowercase): "CAFÉ" is "cafe".
  EXPECT_EQ(pieces(t, t.encode("Unaffable, CAFÉ cafés.")),
            (Pieces{"un", "##aff", "##able", ",", "cafe", "cafe", "##s", "."}));
  // No piece covers "unx…": the whole word is [UNK], not a prefix of it.
  EXPECT_EQ(pieces(t, t.encode("unaffz the")), (Pieces{"[UNK]", "the"}));
  // Specials are matched in the raw text, before lower-casing; "[mask]" is not one.
  EXPECT_EQ(pieces(t, t.encode("the[MASK]the [mask]")),
            (Pieces{"the", "[MASK]", "the", "[UNK]", "[UNK]", "[UNK]"}));
  EXPECT_EQ(pieces(t, t.encode("我我")), (Pieces{"我", "我"}));
}

TEST(WordPieceLoading, WordsOverMaxInputCharsAreUnknownCountingCharactersNotBytes) {
  TempDir dir;
  const auto t = Tokenizer::load(dir.write("vocab.txt", kVocab));
  const std::string hundred = "x" + std::string(99, 'x');
  EXPECT_EQ(t.encode(hundred).size(), 100u);  // x ##x ×99
  EXPECT_EQ(pieces(t, t.encode(hundred + "x")), (Pieces{"[UNK]"}));
  // 100 characters of two bytes each are not too long (they are unknown for another reason:
  // "é" is stripped to "e", which is not in the vocabulary).
  std::string accented;
  for (int i = 0; i < 100; ++i) accented += "\xC3\xA9";
  EXPECT_EQ(pieces(t, t.encode(accented)), (Pieces{"[UNK]"}));
}

TEST(WordPieceLoading, ConfigDecidesCaseAccentsAndChineseChars) {
  TempDir dir;
  dir.write("vocab.txt", kVocab);
  dir.write("tokenizer_config.json",
            R"({"do_lower_case": false, "strip_accents": null, "tokenize_chinese_chars": false})");
  const auto t = Tokenizer::load((dir.path() / "vocab.txt").string());
  const auto& n = t.wordpiece()->options().normalizer;
  EXPECT_FALSE(n.lowercase);
  EXPECT_FALSE(n.strip_accents.has_value());
  EXPECT_FALSE(n.strips_accents());
  EXPECT_FALSE(n.handle_chinese_chars);
  EXPECT_EQ(pieces(t, t.encode("café The 我我")), (Pieces{"café", "[UNK]", "[UNK]"}));
}

TEST(WordPieceLoading, VocabInfoMarksBracketedTokensSpecialAndContinuationsNotWordStarts) {
  TempDir dir;
  const auto t = Tokenizer::load(dir.write("vocab.txt", kVocab));
  const auto& v = t.vocab();
  for (int32_t id = 0; id < v.size; ++id) {
    const std::string piece = t.id_to_piece(id);
    EXPECT_EQ(v.is_special[id] != 0, piece.front() == '[') << piece;
    EXPECT_EQ(v.starts_word[id] != 0, piece.rfind("##", 0) != 0) << piece;
  }
}

TEST(WordPieceLoading, DirectoryPrefersTokenizerJsonAndVocabTxtGivesTheSameIds) {
  TempDir vocab_dir, json_dir;
  const auto from_vocab = Tokenizer::load(vocab_dir.write("vocab.txt", kVocab));
  json_dir.write("tokenizer.json", wordpiece_tokenizer_json(from_vocab).dump());
  json_dir.write("vocab.txt", "not\na\nbert\nvocab\n");  // lacks the specials: must be ignored
  const auto from_dir = Tokenizer::load(json_dir.path().string());
  const std::string text = "The unaffable cafés, 我. [MASK] hello";
  EXPECT_EQ(from_dir.encode(text), from_vocab.encode(text));
  EXPECT_EQ(from_dir.vocab().is_special, from_vocab.vocab().is_special);
  EXPECT_EQ(from_dir.vocab().starts_word, from_vocab.vocab().starts_word);
  EXPECT_EQ(from_dir.serialized_model(), from_vocab.serialized_model());
}

TEST(WordPieceLoading, SerializedModelIsATokenizerJsonThatRestoresTheTokenizer) {
  TempDir dir;
  dir.write("vocab.txt", kVocab);
  dir.write("tokenizer_config.json", R"({"do_lower_case": false, "strip_accents": true})");
  const auto t = Tokenizer::load((dir.path() / "vocab.txt").string());
  const auto json = nlohmann::json::parse(t.serialized_model());
  EXPECT_EQ(json["model"]["type"], "WordPiece");
  EXPECT_EQ(json["normalizer"]["lowercase"], false);
  EXPECT_EQ(json["normalizer"]["strip_accents"], true);
  EXPECT_EQ(json["post_processor"]["single"][0]["SpecialToken"]["id"], "[CLS]");
  EXPECT_EQ(json["post_processor"]["special_tokens"]["[SEP]"]["ids"][0], 4);
  const auto copy = Tokenizer::from_serialized(t.serialized_model(), "checkpoint");
  EXPECT_EQ(copy.kind(), TokenizerKind::wordpiece);
  EXPECT_EQ(copy.serialized_model(), t.serialized_model());
  const std::string text = "Café The unaffable, hello.";
  EXPECT_EQ(copy.encode(text), t.encode(text));
  EXPECT_EQ(wordpiece_vocab_txt(*copy.wordpiece()), kVocab);
}

TEST(WordPieceLoading, DecodeGluesContinuationsAndCleansSpacesBeforePunctuation) {
  TempDir dir;
  const auto t = Tokenizer::load(dir.write("vocab.txt", kVocab));
  EXPECT_EQ(t.decode(t.encode("the unaffable cafes, hello.")), "the unaffable cafes, hello.");
  EXPECT_EQ(t.decode({3, 10, 4}), "[CLS] the [SEP]");
  EXPECT_THROW(t.decode({20}), DataError);
}

TEST(WordPieceLoading, SentencepieceModelsStillLoadAsSentencepiece) {
  const auto& spm = mlm::testing::fixture_tokenizer();
  EXPECT_EQ(spm.kind(), TokenizerKind::sentencepiece);
  EXPECT_EQ(spm.wordpiece(), nullptr);
  EXPECT_THROW(wordpiece_tokenizer_json(spm), std::invalid_argument);
}

// ---- bad input: one DataError line naming the file -----------------------------------------

TEST(WordPieceLoading, MissingSpecialTokensAreAllListed) {
  TempDir dir;
  const auto path = dir.write("vocab.txt", "[PAD]\n[UNK]\n[SEP]\nhello\n");
  expect_data_error([&] { Tokenizer::load(path); }, {path, "[CLS], [MASK]"});
}

TEST(WordPieceLoading, DuplicateTokensAreRejected) {
  TempDir dir;
  const auto path = dir.write("vocab.txt", std::string(kVocab) + "the\n");
  expect_data_error([&] { Tokenizer::load(path); }, {path, "'the'", "twice", "10", "20"});
}

TEST(WordPieceLoading, EmptyVocabAndEmptyLinesAreRejected) {
  TempDir dir;
  const auto empty = dir.write("empty_vocab.txt", "");
  expect_data_error([&] { WordPiece::load(empty); }, {empty, "empty"});
  const auto gap = dir.write("vocab.txt", "[PAD]\n\n[UNK]\n");
  expect_data_error([&] { Tokenizer::load(gap); }, {gap, "line 2", "empty"});
}

TEST(WordPieceLoading, UnparsableOrForeignTokenizerJsonIsRejected) {
  TempDir dir;
  const auto broken = dir.write("broken.json", "{\"model\": {\"type\": \"WordPiece\", ");
  expect_data_error([&] { Tokenizer::load(broken); }, {broken, "not valid JSON"});
  const auto bpe = dir.write("bpe.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}}})");
  // Another model's tokenizer.json is read as a tokenizer.json pipeline (tokenizer.type hf):
  // this one lacks its merges.
  expect_data_error([&] { Tokenizer::load(bpe); }, {bpe, "model.merges: missing"});
  const auto gap = dir.write(
      "gap.json", R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 2}},
                      "pre_tokenizer": {"type": "BertPreTokenizer"}})");
  expect_data_error([&] { Tokenizer::load(gap); }, {gap, "id 1"});
  const auto pre = dir.write(
      "pre.json", R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}},
                      "pre_tokenizer": {"type": "Whitespace"}})");
  expect_data_error([&] { Tokenizer::load(pre); }, {pre, "Whitespace", "BertPreTokenizer"});
}

TEST(WordPieceLoading, DirectoryWithoutTokenizerFilesIsRejected) {
  TempDir dir;
  dir.write("config.json", "{}");
  expect_data_error([&] { Tokenizer::load(dir.path().string()); },
                    {dir.path().string(), "neither tokenizer.json nor vocab.txt"});
}

// ---- the run's tokenizer: tokenizer.type wordpiece loads; trains only when asked -------------

TEST(WordPieceLoading, RunWithTypeWordpieceLoadsAndTrainsOnlyWhenMissingAndAllowed) {
  TempDir dir;
  config::TokenizerConfig tokenizer;
  tokenizer.type = config::TokenizerType::wordpiece;
  tokenizer.model = dir.write("vocab.txt", kVocab);
  EXPECT_EQ(load_or_train_tokenizer(tokenizer, {}).kind(), TokenizerKind::wordpiece);

  tokenizer.model = (dir.path() / "missing" / "vocab.txt").string();
  tokenizer.train_if_missing = false;
  try {
    load_or_train_tokenizer(tokenizer, {});
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "tokenizer.model");
    EXPECT_NE(std::string(e.what()).find(tokenizer.model), std::string::npos) << e.what();
  }
  tokenizer.type = config::TokenizerType::hf;  // never trained
  EXPECT_THROW(Tokenizer::train(tokenizer, {mlm::testing::corpus_path("train.txt")}), ConfigError);
}

TEST(WordPieceLoading, TokenizerTypeMustMatchTheModelsKind) {
  TempDir dir;
  config::TokenizerConfig tokenizer;
  tokenizer.model = dir.write("vocab.txt", kVocab);  // type stays unigram
  EXPECT_THROW(load_or_train_tokenizer(tokenizer, {}), ConfigError);
}

}  // namespace mlm::text::wordpiece_loading
