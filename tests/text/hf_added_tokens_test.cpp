// tokenizer.add_tokens: domain terms become single tokens appended after the largest id, written
// into tokenizer.json so that the `tokenizers` library reading the rewritten file (and adding the
// same terms itself to the original) gives the ids ours gives.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/hf/with_added_tokens.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/errors.h"
#include "text/hf_pipeline_fixture.h"

namespace mlm::text::hf_added_tokens_test {

namespace fs = std::filesystem;
using mlm::testing::hf_reference_dir;
using mlm::testing::quoted;
using mlm::testing::read_text;

const std::vector<std::string> kTerms = {"neurotransmitter", "CRISPR-Cas9", "biodiversity"};

std::vector<std::string> lines_with_terms() {
  return {"The neurotransmitter binds.", "neurotransmitter", "a CRISPR-Cas9 screen, then CRISPR-Cas9 again",
          "eine biodiversity und neurotransmitters", "xneurotransmitter CRISPR-Cas9x", "  biodiversity  ",
          "Nothing new here, only the old pieces."};
}

fs::path scratch_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("mlm_hf_added_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The venv's tokenizers: ids of each line from the rewritten tokenizer.json ("ours") and from
// the original with the terms added by Tokenizer.add_tokens ("theirs").
nlohmann::json reference_ids(const fs::path& dir, const std::string& original, const std::string& rewritten) {
  std::ofstream(dir / "original.json") << original;
  std::ofstream(dir / "rewritten.json") << rewritten;
  {
    std::ofstream lines(dir / "lines.json");
    lines << nlohmann::json(lines_with_terms()).dump();
    std::ofstream(dir / "terms.json") << nlohmann::json(kTerms).dump();
  }
  std::ofstream(dir / "check.py") << R"(import json, sys
from tokenizers import AddedToken, Tokenizer
d = sys.argv[1]
lines = json.load(open(d + "/lines.json"))
ours = Tokenizer.from_str(open(d + "/rewritten.json", encoding="utf-8").read())
theirs = Tokenizer.from_str(open(d + "/original.json", encoding="utf-8").read())
theirs.add_tokens([AddedToken(t, normalized=True) for t in json.load(open(d + "/terms.json"))])
print(json.dumps({"ours": [ours.encode(l, add_special_tokens=False).ids for l in lines],
                  "theirs": [theirs.encode(l, add_special_tokens=False).ids for l in lines]}))
)";
  const auto out = dir / "out.json";
  const std::string command = quoted(MLM_PYTHON) + " " + quoted((dir / "check.py").string()) + " " +
                              quoted(dir.string()) + " >" + quoted(out.string()) + " 2>" +
                              quoted((dir / "err.txt").string());
  if (std::system(command.c_str()) != 0) throw std::runtime_error("check.py failed: " + read_text(dir / "err.txt"));
  return nlohmann::json::parse(read_text(out));
}

class HfAddedTokens : public ::testing::TestWithParam<std::string> {};

TEST_P(HfAddedTokens, TermsBecomeSingleTokensAsTheTokenizersLibraryAddsThem) {
  const auto original = hf::HfTokenizer::load((hf_reference_dir() / GetParam()).string());
  const auto result = hf::with_added_tokens(original, kTerms);
  ASSERT_EQ(result.added.size(), kTerms.size());
  const auto grown = hf::HfTokenizer::from_files(result.files, "rewritten tokenizer.json");
  EXPECT_EQ(grown.vocab_size(), original.vocab_size() + static_cast<int64_t>(kTerms.size()));
  for (size_t k = 0; k < kTerms.size(); ++k) {
    const auto& token = result.added[k];
    EXPECT_EQ(token.content, kTerms[k]);
    EXPECT_EQ(token.id, original.vocab_size() + static_cast<int64_t>(k)) << "appended after the largest id";
    std::vector<int32_t> before;
    original.encode(kTerms[k], before);
    EXPECT_EQ(token.pieces, before) << kTerms[k];
    EXPECT_GT(before.size(), 1u) << kTerms[k] << " was one piece already: the test needs a split term";
    EXPECT_EQ(grown.encode(kTerms[k], false), std::vector<int32_t>{token.id}) << kTerms[k];
    EXPECT_EQ(grown.piece_to_id(kTerms[k]), token.id);
    EXPECT_FALSE(grown.is_special(token.id));
  }
  // The original's pieces keep their ids, the roles too.
  for (int32_t id = 0; id < original.vocab_size(); ++id) ASSERT_EQ(grown.id_to_piece(id), original.id_to_piece(id));
  EXPECT_EQ(grown.special_tokens().mask, original.special_tokens().mask);

  const auto reference = reference_ids(scratch_dir(GetParam()), original.files().tokenizer_json, result.files.tokenizer_json);
  const auto lines = lines_with_terms();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<int32_t> ids;
    grown.encode(lines[i], ids);
    EXPECT_EQ(nlohmann::json(ids), reference["ours"][i]) << lines[i];
    EXPECT_EQ(nlohmann::json(ids), reference["theirs"][i]) << lines[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, HfAddedTokens, ::testing::Values("bert", "roberta", "xlmr", "modernbert"),
                         [](const auto& info) { return info.param; });

TEST(HfAddedTokensFacade, KnownTermsAreSkippedAndTheCheckpointCopyCarriesTheRest) {
  const auto dir = (hf_reference_dir() / "roberta").string();
  const auto tokenizer = Tokenizer::load_hf(dir);
  const std::string known = tokenizer.hf()->id_to_piece(tokenizer.vocab().ids.mask);
  const auto grown = tokenizer.with_added_tokens({known, "neurotransmitter"});
  EXPECT_EQ(grown.size(), tokenizer.size() + 1);
  ASSERT_EQ(grown.vocab().added_tokens.size(), 1u);
  EXPECT_EQ(grown.vocab().added_tokens[0].id, tokenizer.size());
  EXPECT_EQ(grown.vocab().added_tokens[0].pieces, tokenizer.encode("neurotransmitter"));
  EXPECT_EQ(grown.encode("neurotransmitter"), std::vector<int32_t>{static_cast<int32_t>(tokenizer.size())});
  EXPECT_TRUE(grown.vocab().starts_word[tokenizer.size()]);
  EXPECT_FALSE(grown.vocab().is_special[tokenizer.size()]);

  const auto restored = Tokenizer::from_serialized(grown.serialized_model(), "checkpoint/tokenizer.model");
  EXPECT_EQ(restored.size(), grown.size());
  EXPECT_EQ(restored.encode("the neurotransmitter"), grown.encode("the neurotransmitter"));

  // Nothing new: the same tokenizer back, its files untouched.
  const auto same = tokenizer.with_added_tokens({known});
  EXPECT_EQ(same.serialized_model(), tokenizer.serialized_model());
  EXPECT_TRUE(same.vocab().added_tokens.empty());
}

}  // namespace mlm::text::hf_added_tokens_test
