// HfTokenizer's API beyond the ids: special-token roles from the files beside tokenizer.json,
// pieces and ids, and one-line errors naming the file and the JSON key for bad input.
#include <gtest/gtest.h>

#include <thread>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/util/errors.h"
#include "text/hf_pipeline_fixture.h"

namespace mlm::text::hf_tokenizer_api {

namespace fs = std::filesystem;
using hf::HfTokenizer;
using mlm::testing::hf_reference_dir;

TEST(HfTokenizerRoles, ComeFromTokenizerConfigBesideTheJson) {
  const auto roberta = HfTokenizer::load((hf_reference_dir() / "roberta").string());
  const auto& r = roberta.special_tokens();
  EXPECT_EQ(r.cls, roberta.piece_to_id("<s>"));
  EXPECT_EQ(r.bos, roberta.piece_to_id("<s>"));
  EXPECT_EQ(r.sep, roberta.piece_to_id("</s>"));
  EXPECT_EQ(r.eos, roberta.piece_to_id("</s>"));
  EXPECT_EQ(r.mask, roberta.piece_to_id("<mask>"));  // {"content": "<mask>", ...}
  EXPECT_EQ(r.pad, roberta.piece_to_id("<pad>"));
  EXPECT_EQ(r.unk, roberta.piece_to_id("<unk>"));
  EXPECT_TRUE(roberta.is_special(*r.mask));
  EXPECT_FALSE(roberta.is_special(roberta.encode("hello", false).at(0)));

  const auto modernbert = HfTokenizer::load((hf_reference_dir() / "modernbert" / "tokenizer.json").string());
  EXPECT_EQ(modernbert.special_tokens().cls, modernbert.piece_to_id("[CLS]"));
  EXPECT_EQ(modernbert.special_tokens().mask, modernbert.piece_to_id("[MASK]"));
  EXPECT_FALSE(modernbert.special_tokens().bos.has_value());
  // A non-special added token is neither special nor lost.
  const auto ip = modernbert.piece_to_id("|||IP_ADDRESS|||");
  ASSERT_TRUE(ip.has_value());
  EXPECT_FALSE(modernbert.is_special(*ip));
  EXPECT_EQ(modernbert.id_to_piece(*ip), "|||IP_ADDRESS|||");
  EXPECT_EQ(modernbert.vocab_size(), *modernbert.piece_to_id("[MASK]") + 1);
}

TEST(HfTokenizerRoles, WithoutConfigClsAndSepComeFromThePostProcessorAndUnkFromTheModel) {
  const auto text = mlm::testing::read_text(hf_reference_dir() / "bpe_options" / "tokenizer.json");
  const auto tokenizer = HfTokenizer::from_json(text, "bpe_options");
  const auto& r = tokenizer.special_tokens();
  EXPECT_EQ(r.cls, tokenizer.piece_to_id("[CLS]"));
  EXPECT_EQ(r.sep, tokenizer.piece_to_id("[SEP]"));
  EXPECT_EQ(r.unk, tokenizer.piece_to_id("[UNK]"));
  EXPECT_FALSE(r.mask.has_value());
  EXPECT_EQ(tokenizer.model_type(), "BPE");
}

TEST(HfTokenizerWords, EachPreTokenStartsAWord) {
  const auto tokenizer = HfTokenizer::load((hf_reference_dir() / "bert").string());
  std::vector<int32_t> ids;
  std::vector<uint8_t> starts;
  tokenizer.encode("unbelievably, [MASK] x", ids, &starts);
  ASSERT_EQ(ids.size(), starts.size());
  std::vector<std::string> words;
  for (size_t k = 0; k < ids.size(); ++k) {
    if (starts[k]) words.emplace_back();
    words.back() += tokenizer.id_to_piece(ids[k]) + " ";
  }
  ASSERT_EQ(words.size(), 4u) << ::testing::PrintToString(words);
  EXPECT_EQ(words[1], ", ");
  EXPECT_EQ(words[2], "[MASK] ");
}

class HfTokenizerBadInput : public ::testing::Test {
 protected:
  fs::path write(const std::string& text) {
    const fs::path path = dir_ / "tokenizer.json";
    std::ofstream(path) << text;
    return path;
  }
  // The DataError's message when loading `text`.
  std::string error_of(const std::string& text) {
    const auto path = write(text);
    try {
      HfTokenizer::load(path.string());
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no DataError for " << text;
    return "";
  }
  static std::string with_model(const std::string& model, const std::string& rest = "") {
    return R"({"version": "1.0", )" + rest + R"("model": )" + model + "}";
  }

  fs::path dir_ = mlm::testing::make_temp_dir("hf_bad_input");
};

constexpr const char* kBpe =
    R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]})";

TEST_F(HfTokenizerBadInput, AValidOneLoads) {
  const auto tokenizer = HfTokenizer::load(write(with_model(kBpe)).string());
  EXPECT_EQ(tokenizer.encode("ab", false), (std::vector<int32_t>{2}));
  EXPECT_EQ(tokenizer.encode("ba", false), (std::vector<int32_t>{1, 0}));
}

TEST_F(HfTokenizerBadInput, NotJson) {
  EXPECT_NE(error_of("{\"model\": ").find("is not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("is not valid JSON"), std::string::npos);
}

TEST_F(HfTokenizerBadInput, MissingFile) {
  try {
    HfTokenizer::load((dir_ / "absent").string());
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be read"), std::string::npos) << e.what();
  }
}

TEST_F(HfTokenizerBadInput, UnknownModelType) {
  const auto message = error_of(with_model(R"({"type": "Markov", "vocab": {}})"));
  EXPECT_NE(message.find("model.type: model type 'Markov' is not supported (BPE, Unigram, WordPiece, WordLevel)"),
            std::string::npos) << message;
}

TEST_F(HfTokenizerBadInput, MergesNamingPiecesNotInTheVocabulary) {
  auto message = error_of(with_model(R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", "a zz"]})"));
  EXPECT_NE(message.find("model.merges[1]: 'zz' is not in the vocabulary"), std::string::npos) << message;
  message = error_of(with_model(R"({"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]})"));
  EXPECT_NE(message.find("model.merges[0]: the merged piece 'ab' is not in the vocabulary"), std::string::npos)
      << message;
  message = error_of(with_model(R"({"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]})"));
  EXPECT_NE(message.find("model.merges[0]: expected two pieces"), std::string::npos) << message;
}

TEST_F(HfTokenizerBadInput, UnsupportedComponentsNameTheirKey) {
  // Types a later library version might add.
  auto message = error_of(with_model(kBpe, R"("normalizer": {"type": "Append"}, )"));
  EXPECT_NE(message.find("normalizer.type: normalizer type 'Append' is not supported"), std::string::npos) << message;
  message = error_of(with_model(
      kBpe, R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Digits"}, {"type": "RandomChunk"}]}, )"));
  EXPECT_NE(message.find("pre_tokenizer.pretokenizers[1].type: pre-tokenizer type 'RandomChunk'"),
            std::string::npos) << message;
  message = error_of(with_model(kBpe, R"("post_processor": {"type": "Foo"}, )"));
  EXPECT_NE(message.find("post_processor.type"), std::string::npos) << message;
  message = error_of(with_model(
      kBpe, R"("pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated"}, )"));
  EXPECT_NE(message.find("pre_tokenizer.pattern.Regex: the regex does not compile"), std::string::npos) << message;
  message = error_of(with_model(
      kBpe, R"("pre_tokenizer": {"type": "Split", "pattern": {"String": "a"}, "behavior": "Sideways"}, )"));
  EXPECT_NE(message.find("pre_tokenizer.behavior: 'Sideways' is not a split behavior"), std::string::npos) << message;
}

TEST_F(HfTokenizerBadInput, BpeDropoutIsRefused) {
  const auto message = error_of(with_model(R"({"type": "BPE", "dropout": 0.1, "vocab": {"a": 0}, "merges": []})"));
  EXPECT_NE(message.find("model.dropout: dropout is not supported"), std::string::npos) << message;
  EXPECT_NO_THROW(HfTokenizer::load(write(with_model(R"({"type": "BPE", "dropout": 0.0, "vocab": {"a": 0}, "merges": []})")).string()));
}

TEST_F(HfTokenizerBadInput, MissingModelAndBadUnigram) {
  auto message = error_of(R"({"normalizer": null})");
  EXPECT_NE(message.find("model: missing"), std::string::npos) << message;
  message = error_of(with_model(R"({"type": "Unigram", "unk_id": 0, "vocab": [["a", -1.0], ["b"]]})"));
  EXPECT_NE(message.find("model.vocab[1]: expected [piece, score]"), std::string::npos) << message;
  message = error_of(with_model(R"({"type": "Unigram", "unk_id": 5, "vocab": [["a", -1.0]]})"));
  EXPECT_NE(message.find("model.unk_id: out of the vocabulary's range"), std::string::npos) << message;
}

TEST_F(HfTokenizerBadInput, ARoleTheVocabularyLacks) {
  const auto path = write(with_model(kBpe));
  std::ofstream(dir_ / "tokenizer_config.json") << R"({"mask_token": "<mask>"})";
  try {
    HfTokenizer::load(path.string());
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer_config.json': mask_token: '<mask>' is not in the vocabulary"),
              std::string::npos) << e.what();
  }
  fs::remove(dir_ / "tokenizer_config.json");
}

}  // namespace mlm::text::hf_tokenizer_api

namespace mlm::text::hf_tokenizer_api {

// The data loader encodes from several threads: the scratch buffers are per thread and the
// BPE word cache is shared under a lock, so every thread gets the single-threaded ids.
TEST(HfTokenizerThreads, ConcurrentEncodesGiveTheSameIds) {
  for (const char* kind : {"roberta", "xlmr", "mistral"}) {
    const auto tokenizer = HfTokenizer::load((hf_reference_dir() / kind).string());
    const auto& lines = mlm::testing::hf_lines();
    std::vector<std::vector<int32_t>> want;
    for (const auto& line : lines) want.push_back(tokenizer.encode(line, true));
    std::vector<size_t> differ(4, 0);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < differ.size(); ++t) {
      threads.emplace_back([&, t] {
        for (size_t i = t; i < lines.size() * 2; i += 3) {
          differ[t] += tokenizer.encode(lines[i % lines.size()], true) != want[i % lines.size()];
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (size_t t = 0; t < differ.size(); ++t) EXPECT_EQ(differ[t], 0u) << kind << " thread " << t;
  }
}

// Text is documented as valid UTF-8; broken bytes must still not crash or read out of bounds.
TEST(HfTokenizerRobustness, InvalidUtf8NeitherCrashesNorLosesTheRest) {
  const std::vector<std::string> broken = {"\xFF", "abc\xC3", "\xE2\x82", "\x80\x80 x", "a\xF0\x9F\x98 b",
                                           std::string("nul\0byte", 8), "\xED\xA0\x80 surrogate"};
  for (const char* kind : {"roberta", "modernbert", "mistral", "xlmr", "bert", "bpe_options", "whitespace_digits"}) {
    const auto tokenizer = HfTokenizer::load((hf_reference_dir() / kind).string());
    for (const auto& text : broken) {
      const auto ids = tokenizer.encode(text + " tail", false);
      for (int32_t id : ids) EXPECT_LT(id, tokenizer.vocab_size()) << kind;
      EXPECT_FALSE(ids.empty()) << kind << ": " << text;
    }
  }
}

}  // namespace mlm::text::hf_tokenizer_api
