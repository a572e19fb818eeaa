// Ids and counts read from tokenizer files are bounded before anything is sized by them: an
// id far past the vocabulary (a damaged or hostile file) is one DataError line naming the
// file, the entry and the value, never std::bad_alloc or a write past a table.
#include <gtest/gtest.h>

#include <array>
#include <fstream>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/tokenizer.h"
#include "mlm/text/wordpiece/wordpiece.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

namespace mlm::text::tokenizer_file_bounds {

namespace fs = std::filesystem;
using hf::HfTokenizer;

class TokenizerFileBounds : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  // Runs `load`; expects one DataError line holding the file and every piece of `pieces`.
  template <class F>
  void expect_refused(F&& load, const std::string& path, const std::vector<std::string>& pieces) {
    try {
      load();
      ADD_FAILURE() << "no DataError for " << path;
    } catch (const DataError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find(path), std::string::npos) << message;
      for (const auto& piece : pieces) {
        EXPECT_NE(message.find(piece), std::string::npos) << "'" << piece << "' not in: " << message;
      }
    }
  }

  fs::path dir_ = mlm::testing::make_temp_dir("tokenizer_file_bounds");
};

constexpr const char* kBpeModel =
    R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]})";

std::string added_token(const std::string& content, const std::string& id) {
  return R"({"id": )" + id + R"(, "content": ")" + content + R"(", "special": true})";
}

TEST_F(TokenizerFileBounds, AnAddedTokenFarBeyondTheVocabularyIsRefused) {
  const auto path = write("tokenizer.json", std::string("{") + R"("added_tokens": [)" + added_token("[CLS]", "3") +
                                                ", " + added_token("[MASK]", "2000000000") + "], " + kBpeModel + "}");
  expect_refused([&] { HfTokenizer::load(path); }, path, {"added_tokens[1].id", "2000000000"});
}

TEST_F(TokenizerFileBounds, AVocabularyIdFarBeyondTheVocabularyIsRefused) {
  const auto path = write("tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 2000000000},
                                                 "merges": []}})");
  expect_refused([&] { HfTokenizer::load(path); }, path, {"model.vocab", "'b'", "2000000000"});
}

TEST_F(TokenizerFileBounds, APostProcessorIdOutsideTheVocabularyIsRefused) {
  // cls and sep come from the template when no tokenizer_config.json names them: an id past
  // the vocabulary would be a special role no table has a row for.
  const auto templated = write("tokenizer.json", std::string("{") + R"("post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
      "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2000000000], "tokens": ["[CLS]"]}}}, )" +
                                                     kBpeModel + "}");
  expect_refused([&] { HfTokenizer::load(templated); }, templated,
                 {"post_processor.special_tokens.[CLS].ids[0]", "2000000000"});
  // An id past int32 is refused too, not cut to 32 bits.
  const auto bert = write("tokenizer.json", std::string("{") +
                                                R"("post_processor": {"type": "BertProcessing", "sep": ["b", 1],
                                                    "cls": ["a", 4294967296]}, )" +
                                                kBpeModel + "}");
  expect_refused([&] { HfTokenizer::load(bert); }, bert, {"post_processor.cls", "4294967296"});
}

TEST_F(TokenizerFileBounds, IdsWithinTheVocabularyAndModestHolesStillLoad) {
  // Hub files leave a few holes in their ids (an added token past a gap): these load.
  const auto path = write("tokenizer.json", std::string("{") + R"("added_tokens": [)" + added_token("[CLS]", "3") +
                                                ", " + added_token("[MASK]", "40") + "], " + kBpeModel + "}");
  const auto tokenizer = HfTokenizer::load(path);
  EXPECT_EQ(tokenizer.vocab_size(), 41);
  EXPECT_EQ(tokenizer.piece_to_id("[MASK]"), 40);
}

TEST_F(TokenizerFileBounds, AVocabularyAsLargeAsXlmRobertasLoads) {
  // 250002 pieces, the last ids added tokens: the bounds leave room for real multilingual
  // vocabularies.
  constexpr int kPieces = 250000;
  std::string vocab;
  for (int id = 0; id < kPieces; ++id) vocab += (id ? ",\"p" : "\"p") + std::to_string(id) + "\":" + std::to_string(id);
  const auto path = write("tokenizer.json", R"({"added_tokens": [)" + added_token("<mask>", "250001") +
                                                R"(], "model": {"type": "BPE", "vocab": {)" + vocab +
                                                R"(}, "merges": []}})");
  const auto tokenizer = HfTokenizer::load(path);
  EXPECT_EQ(tokenizer.vocab_size(), 250002);
  EXPECT_EQ(tokenizer.piece_to_id("<mask>"), 250001);
}

TEST_F(TokenizerFileBounds, AWordLevelVocabularyIsBoundedAndNeedsItsUnknownPiece) {
  const auto far = write("tokenizer.json", R"({"model": {"type": "WordLevel", "vocab": {"<unk>": 0, "b": 2000000000},
                                                "unk_token": "<unk>"}})");
  expect_refused([&] { HfTokenizer::load(far); }, far, {"model.vocab", "'b'", "2000000000"});
  // The library fails on the first word it lacks: refused at load instead.
  const auto no_unk = write("tokenizer.json", R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1},
                                                   "unk_token": "[UNK]"}})");
  expect_refused([&] { HfTokenizer::load(no_unk); }, no_unk, {"model.unk_token", "[UNK]"});
}

TEST_F(TokenizerFileBounds, AFixedLengthOutsideOneToInt32IsRefused) {
  for (const char* length : {"0", "-3", "4294967296", "18446744073709551615"}) {
    const auto path = write("tokenizer.json", std::string(R"({"pre_tokenizer": {"type": "FixedLength", "length": )") +
                                                  length + "}, " + kBpeModel + "}");
    expect_refused([&] { HfTokenizer::load(path); }, path, {"pre_tokenizer.length"});
  }
}

TEST_F(TokenizerFileBounds, SequencesNestedPastTheBoundAreRefused) {
  // Within the bound a nested Sequence loads; past it, one line names the key where it stops.
  const auto nested = [&](int levels, const char* stage, const char* member, const char* leaf) {
    std::string json = leaf;
    for (int k = 0; k < levels; ++k) json = R"({"type": "Sequence", ")" + std::string(member) + R"(": [)" + json + "]}";
    return write("tokenizer.json", "{\"" + std::string(stage) + "\": " + json + ", " + kBpeModel + "}");
  };
  EXPECT_NO_THROW(HfTokenizer::load(nested(32, "normalizer", "normalizers", R"({"type": "Nmt"})")));
  for (const auto& [stage, member, leaf] :
       std::vector<std::array<const char*, 3>>{{"normalizer", "normalizers", R"({"type": "Nmt"})"},
                                               {"pre_tokenizer", "pretokenizers", R"({"type": "UnicodeScripts"})"},
                                               {"decoder", "decoders", R"({"type": "CTC"})"}}) {
    const auto path = nested(1000, stage, member, leaf);
    expect_refused([&] { HfTokenizer::load(path); }, path, {std::string(stage) + "." + member + "[0]", "32 levels"});
  }
}

TEST_F(TokenizerFileBounds, AnUnknownDecoderIsRefusedLikeEveryOtherComponent) {
  const auto path = write("tokenizer.json", std::string(R"({"decoder": {"type": "Klingon"}, )") + kBpeModel + "}");
  expect_refused([&] { HfTokenizer::load(path); }, path, {"decoder.type", "Klingon", "CTC"});
}

constexpr const char* kWordPieceParts =
    R"("pre_tokenizer": {"type": "BertPreTokenizer"}, "normalizer": null)";

TEST_F(TokenizerFileBounds, AWordPieceTokenizerJsonIdFarBeyondItsEntriesIsRefused) {
  const auto added = write("added.json", std::string("{") + kWordPieceParts + R"(, "added_tokens": [)" +
                                             added_token("[MASK]", "2000000000") +
                                             R"(], "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1}}})");
  expect_refused([&] { WordPiece::load(added); }, added, {"added_tokens[0]", "[MASK]", "2000000000"});
  const auto vocab = write("vocab.json", std::string("{") + kWordPieceParts +
                                             R"(, "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 2000000000}}})");
  expect_refused([&] { WordPiece::load(vocab); }, vocab, {"model.vocab", "'a'", "2000000000"});
}

}  // namespace mlm::text::tokenizer_file_bounds
