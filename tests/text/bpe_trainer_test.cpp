// The BPE and WordPiece trainers on small word counts: the merges `tokenizers`' own trainer
// learns (its test_train case), tie-breaking, special tokens, min_frequency, vocab_size, the
// WordPiece prefix; and the tokenizer.json they are written to, loaded back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "mlm/text/tokenizer.h"
#include "mlm/text/tokenizer_trainers/bpe_trainer.h"
#include "mlm/text/tokenizer_trainers/train_tokenizer_json.h"
#include "mlm/text/corpus/corpus_files.h"
#include "mlm/text/tokenizer_trainers/word_splitters.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"
#include "text/wordpiece_fixture.h"

namespace mlm::text::bpe_trainer_test {

using tokenizer_trainers::BpeModel;
using tokenizer_trainers::BpeTrainerOptions;
using tokenizer_trainers::WordCounts;
using Merges = std::vector<std::pair<std::string, std::string>>;

BpeModel train(const WordCounts& words, BpeTrainerOptions options) { return tokenizer_trainers::train_bpe(words, options); }

// tokenizers/src/models/bpe/trainer.rs, test_train: the same words give the same ids.
TEST(BpeTrainer, LearnsTheLibrarysVocabularyAndMergesOnItsOwnExample) {
  const WordCounts words = {{"roses", 1}, {"are", 2}, {"red", 1}, {"voilets", 1}, {"blue", 1}, {"BERT", 1},
                            {"is", 2},    {"big", 1}, {"and", 1}, {"so", 1},      {"GPT-2", 1}};
  BpeTrainerOptions options;
  options.min_frequency = 2;
  const auto model = train(words, options);
  const std::vector<std::string> want = {"-", "2", "B", "E", "G", "P", "R", "T", "a", "b", "d", "e", "g",
                                         "i", "l", "n", "o", "r", "s", "t", "u", "v", "re", "are", "is"};
  EXPECT_EQ(model.vocab, want);
  EXPECT_EQ(model.merges, (Merges{{"r", "e"}, {"a", "re"}, {"i", "s"}}));
}

TEST(BpeTrainer, BreaksTiesByTheSmallestPairOfIds) {
  // (c,d) and (a,b) are both used 3 times: (a,b) has the smaller ids; then (x,y) once more.
  const WordCounts words = {{"cd", 3}, {"ab", 3}, {"xy", 4}};
  const auto model = train(words, {});
  EXPECT_EQ(model.merges, (Merges{{"x", "y"}, {"a", "b"}, {"c", "d"}}));
}

TEST(BpeTrainer, PutsSpecialTokensFirstAndTheInitialAlphabetInCodePointOrder) {
  BpeTrainerOptions options;
  options.special_tokens = {"<s>", "<pad>"};
  options.initial_alphabet = {"z", "\xC3\xA9"};  // é: kept though unseen
  const auto model = train({{"ab", 1}}, options);
  EXPECT_EQ(model.vocab, (std::vector<std::string>{"<s>", "<pad>", "a", "b", "z", "\xC3\xA9", "ab"}));
}

TEST(BpeTrainer, StopsAtMinFrequencyAndAtVocabSize) {
  const WordCounts words = {{"aaaa", 5}, {"bc", 2}, {"de", 1}};
  BpeTrainerOptions options;
  options.min_frequency = 2;
  auto model = train(words, options);
  EXPECT_EQ(model.merges, (Merges{{"a", "a"}, {"aa", "aa"}, {"b", "c"}}));  // never (d,e): used once
  options.vocab_size = 7;  // a b c d e + 2 merges
  model = train(words, options);
  EXPECT_EQ(model.vocab.size(), 7u);
  EXPECT_EQ(model.merges.size(), 2u);
}

TEST(BpeTrainer, CountsAWordsOverlappingPairsAsTheLibraryDoes) {
  // "aaa": (a,a) twice in the word, merged once left to right, leaving (aa,a).
  const auto model = train({{"aaa", 3}}, {});
  EXPECT_EQ(model.merges, (Merges{{"a", "a"}, {"aa", "a"}}));
}

TEST(WordPieceTrainer, PrefixesContinuationsAndMergesWithoutTheSecondPrefix) {
  BpeTrainerOptions options;
  options.continuing_subword_prefix = "##";
  options.special_tokens = {"[UNK]"};
  const auto model = train({{"hug", 3}, {"hugs", 2}}, options);
  // [UNK], the alphabet (first characters), then the ## characters, then the merges; (h,##u)
  // and (##u,##g) are both used 5 times: the smaller ids (2,5) go first.
  EXPECT_EQ(model.vocab, (std::vector<std::string>{"[UNK]", "g", "h", "s", "u", "##u", "##g", "##s", "hu",
                                                   "hug", "hugs"}));
  EXPECT_EQ(model.merges, (Merges{{"h", "##u"}, {"hu", "##g"}, {"hug", "##s"}}));
}

TEST(WordPieceTrainer, KeepsTheMostFrequentCharactersUnderLimitAlphabet) {
  BpeTrainerOptions options;
  options.limit_alphabet = 2;
  const auto model = train({{"ab", 5}, {"ac", 1}}, options);
  EXPECT_EQ(model.vocab, (std::vector<std::string>{"a", "b", "ab"}));  // 'c' dropped from "ac" too
}

TEST(WordSplitters, ByteLevelSplitsAsGpt2AndBertLowercases) {
  std::vector<std::string> got;
  const auto collect = [&](std::string_view w) { got.emplace_back(w); };
  tokenizer_trainers::word_splitter({tokenizer_trainers::TrainedKind::byte_level_bpe})()("Hello world's 42!", collect);
  EXPECT_EQ(got, (std::vector<std::string>{"Hello", "\xC4\xA0world", "'s", "\xC4\xA0" "42", "!"}));
  got.clear();
  tokenizer_trainers::word_splitter({tokenizer_trainers::TrainedKind::wordpiece, false, true})()("Hello, WORLD", collect);
  EXPECT_EQ(got, (std::vector<std::string>{"hello", ",", "world"}));
}

TEST(WordCounting, ThreadsCountAsOneThreadAndEveryFormatReadsThroughTheDocumentReader) {
  const auto splitter = tokenizer_trainers::word_splitter({tokenizer_trainers::TrainedKind::byte_level_bpe});
  std::vector<std::string> lines;
  {
    std::ifstream in(testing::corpus_path("train.txt"));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  const WordCounts one = tokenizer_trainers::count_words(lines, splitter());
  for (int threads : {1, 3}) {
    const auto files = resolve_corpus({testing::corpus_path("train.txt")}, {}, "test");
    EXPECT_EQ(tokenizer_trainers::count_words(files, {}, splitter, threads), one) << threads << " threads";
  }
  const auto jsonl = tokenizer_trainers::count_words(resolve_corpus({testing::corpus_path("docs.jsonl")}, {}, "test"), {},
                                           splitter, 2);
  std::vector<std::string> texts;  // the records' "text" fields, read here directly
  {
    std::ifstream in(testing::corpus_path("docs.jsonl"));
    for (std::string line; std::getline(in, line);) texts.push_back(nlohmann::json::parse(line)["text"]);
  }
  EXPECT_EQ(jsonl, tokenizer_trainers::count_words(texts, splitter()));
  EXPECT_FALSE(
      tokenizer_trainers::count_words(resolve_corpus({testing::corpus_path("docs.jsonl.gz")}, {}, "test"), {}, splitter, 2).empty());
}

config::TokenizerConfig trained_config(config::TokenizerType type, const std::string& model) {
  config::TokenizerConfig c;
  c.type = type;
  c.model = model;
  c.vocab_size = 600;
  return c;
}

TEST(TokenizerJsonTraining, ByteLevelBpeTrainsWhenMissingAndLoadsAsHf) {
  const auto dir = testing::make_temp_dir("bl_train");
  config::DataConfig data;
  data.train_files = {testing::corpus_path("train.txt")};
  for (auto style : {config::SpecialTokenStyle::roberta, config::SpecialTokenStyle::modernbert}) {
    auto c = trained_config(config::TokenizerType::byte_level_bpe, (dir / config::to_string(style)).string());
    c.special_tokens = style;
    const auto tokenizer = load_or_train_tokenizer(c, data);
    EXPECT_EQ(tokenizer.kind(), TokenizerKind::hf);
    EXPECT_EQ(tokenizer.size(), 600);
    const bool roberta = style == config::SpecialTokenStyle::roberta;
    EXPECT_EQ(tokenizer.id_to_piece(tokenizer.vocab().ids.mask), roberta ? "<mask>" : "[MASK]");
    EXPECT_EQ(tokenizer.id_to_piece(tokenizer.vocab().ids.cls), roberta ? "<s>" : "[CLS]");
    EXPECT_EQ(tokenizer.vocab().ids.mask, roberta ? 4 : 599);
    EXPECT_EQ(tokenizer.decode(tokenizer.encode("The quick brown fox.")), "The quick brown fox.");
  }
  std::filesystem::remove_all(dir);
}

TEST(TokenizerJsonTraining, WordPieceTrainsWhenMissingAndLoadsAsWordPiece) {
  const auto dir = testing::make_temp_dir("wp_train");
  config::DataConfig data;
  data.train_files = {testing::corpus_path("train.txt")};
  auto c = trained_config(config::TokenizerType::wordpiece, (dir / "wp").string());
  c.lowercase = true;
  c.min_frequency = 1;
  c.vocab_size = 400;
  const auto tokenizer = load_or_train_tokenizer(c, data);
  EXPECT_EQ(tokenizer.kind(), TokenizerKind::wordpiece);
  EXPECT_EQ(tokenizer.size(), 400);
  EXPECT_EQ(tokenizer.id_to_piece(0), "[PAD]");
  EXPECT_EQ(tokenizer.id_to_piece(tokenizer.vocab().ids.mask), "[MASK]");
  EXPECT_EQ(tokenizer.encode("THE"), tokenizer.encode("the"));
  const auto json = nlohmann::json::parse(testing::read_text(dir / "wp" / "tokenizer.json"));
  EXPECT_EQ(json["model"]["continuing_subword_prefix"], "##");
  EXPECT_EQ(json["post_processor"]["type"], "TemplateProcessing");
  std::filesystem::remove_all(dir);
}

TEST(TokenizerJsonTraining, AnEmptyCorpusIsADataError) {
  const auto dir = testing::make_temp_dir("empty_train");
  std::ofstream(dir / "empty.txt") << "\n   \n";
  auto c = trained_config(config::TokenizerType::byte_level_bpe, (dir / "bl").string());
  EXPECT_THROW(Tokenizer::train(c, {(dir / "empty.txt").string()}), DataError);
  std::filesystem::remove_all(dir);
}

TEST(TokenizerJsonTraining, AFileWhereTheDirectoryGoesIsRefusedBeforeTraining) {
  const auto dir = testing::make_temp_dir("file_train");
  std::ofstream(dir / "plain") << "not a tokenizer\n";
  const auto corpus = testing::corpus_path("train.txt");
  for (auto type : {config::TokenizerType::byte_level_bpe, config::TokenizerType::wordpiece}) {
    try {
      Tokenizer::train(trained_config(type, (dir / "plain").string()), {corpus});
      ADD_FAILURE() << "expected a ConfigError";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("is a file"), std::string::npos) << e.what();
    }
  }
  // And a directory where a sentencepiece model file goes.
  auto spm = trained_config(config::TokenizerType::unigram, dir.string());
  EXPECT_THROW(Tokenizer::train(spm, {corpus}), ConfigError);
  EXPECT_EQ(testing::read_text(dir / "plain"), "not a tokenizer\n");
  std::filesystem::remove_all(dir);
}

}  // namespace mlm::text::bpe_trainer_test
