// A sentencepiece model with [PAD] [CLS] [SEP] [UNK] but no [MASK] piece (DeBERTa-v2/v3's
// spm.model, trained here by the sentencepiece library as the hub's is laid out) loads with
// [MASK] added after the pieces, as transformers' DebertaV2Tokenizer adds it: one id more, no
// text encoding to it, decoded and named as itself, and written as an added token at that id.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "mlm/test_paths.h"
#include "mlm/text/sentencepiece/sentencepiece_json.h"
#include "mlm/text/tokenizer.h"

namespace mlm::text::sentencepiece_added_mask {

namespace fs = std::filesystem;

constexpr int kPieces = 120;

// DIR/spm.model as the hub's deberta-v3 holds it: [PAD] 0, [CLS] 1, [SEP] 2, [UNK] 3, no [MASK].
std::string train_deberta_spm(const fs::path& dir) {
  fs::create_directories(dir);
  const std::string script =
      "import sentencepiece as s; s.SentencePieceTrainer.train(input='" + std::string(MLM_FIXTURES_DIR) +
      "/corpus/train.txt', model_prefix='" + (dir / "spm").string() + "', vocab_size=" + std::to_string(kPieces) +
      ", model_type='unigram', pad_id=0, pad_piece='[PAD]', bos_id=1, bos_piece='[CLS]', eos_id=2, "
      "eos_piece='[SEP]', unk_id=3, unk_piece='[UNK]', minloglevel=2)";
  const std::string command = std::string("'") + MLM_PYTHON + "' -c \"" + script + "\" > /dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return (dir / "spm.model").string();
}

TEST(SentencePieceAddedMask, DebertasSpmModelGetsMaskAfterItsPieces) {
  const auto dir = fs::temp_directory_path() / ("mlm_spm_added_mask_" + std::to_string(::getpid()));
  const auto path = train_deberta_spm(dir);
  const auto tokenizer = Tokenizer::load(path);
  const auto& ids = tokenizer.vocab().ids;
  EXPECT_EQ(ids.pad, 0);
  EXPECT_EQ(ids.cls, 1);
  EXPECT_EQ(ids.sep, 2);
  EXPECT_EQ(ids.unk, 3);
  EXPECT_EQ(ids.mask, kPieces);
  EXPECT_EQ(tokenizer.size(), kPieces + 1);
  EXPECT_TRUE(tokenizer.vocab().is_special[kPieces]);
  EXPECT_EQ(tokenizer.id_to_piece(kPieces), "[MASK]");

  const auto words = tokenizer.encode("the river stone");
  for (int32_t id : tokenizer.encode("the [MASK] stone")) EXPECT_LT(id, kPieces);  // no text is the mask
  auto masked = words;
  masked.insert(masked.begin() + 1, ids.mask);
  const auto text = tokenizer.decode(masked);
  EXPECT_NE(text.find("[MASK]"), std::string::npos) << text;
  EXPECT_EQ(tokenizer.decode(words), "the river stone");

  // The export's tokenizer.json: [MASK] an added special token at that id.
  const auto json = sentencepiece_tokenizer_json(tokenizer.serialized_model(), ids, path);
  bool listed = false;
  for (const auto& token : json["added_tokens"])
    listed = listed || (token["id"] == kPieces && token["content"] == "[MASK]" && token["special"] == true);
  EXPECT_TRUE(listed) << json["added_tokens"].dump();
  fs::remove_all(dir);
}

}  // namespace mlm::text::sentencepiece_added_mask
