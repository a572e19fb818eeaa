// The replaced-token-detection pair's directory (rtd/rtd_directory.h), the same for every
// architecture's pair: written and read back exactly (model.init_from) under either embedding
// sharing, which the discriminator's config.json records; refused, naming the file, when the two
// networks' tokenizer files differ or a network's shape cannot be built; and the parameter
// estimate that bounds a file's memory counts the GDES delta.
#include <gtest/gtest.h>

#include <fstream>

#include "config/config_test_util.h"
#include "mlm/model/architectures.h"
#include "mlm/model/hf/config_fields.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/model/rtd/rtd_directory.h"
#include "mlm/util/errors.h"
#include "rtd_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::rtd_pair_directory {
namespace fs = std::filesystem;

using testing::build_rtd_pair;
using testing::tiny_rtd_pair;
constexpr int64_t kVocab = testing::kRtdVocab;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

void rewrite_json(const fs::path& path, const std::function<void(nlohmann::json&)>& change) {
  auto json = read_json_file(path.string());
  change(json);
  std::ofstream(path) << json.dump(2);
}

class RtdPairDirectory : public ::testing::TestWithParam<config::Architecture> {
 protected:
  const ArchitectureSpec& spec() const { return architecture_spec(GetParam()); }
};

// Each sharing is written into the discriminator's config.json and read back whatever the
// run's config says; the pair loads back bit for bit (the delta, from the summed embeddings, to
// fp32's rounding).
TEST_P(RtdPairDirectory, RoundTripsWithItsEmbeddingSharing) {
  for (const auto sharing : {config::EmbeddingSharing::shared, config::EmbeddingSharing::gdes}) {
    SCOPED_TRACE(std::string(config::to_string(sharing)));
    config::testing::TempDir dir;
    const auto c = tiny_rtd_pair(GetParam(), sharing);
    auto model = build_rtd_pair(c, 1);
    if (auto* pair = model->rtd_pair(); pair->gdes()) {
      torch::NoGradGuard no_grad;
      pair->word_embeddings_delta.narrow(0, 0, kVocab).normal_(0, 0.1);
    }
    const auto written = spec().write_hf(model, dir.path().string(), WeightFormat::safetensors);
    ASSERT_EQ(written.size(), 2u);
    const auto json = read_json_file((dir.path() / "discriminator" / "config.json").string());
    EXPECT_EQ(json.value("embedding_sharing", std::string()), config::to_string(sharing));
    ASSERT_TRUE(spec().owns_directory(dir.path().string()));
    EXPECT_EQ(spec().tokenizer_directory(dir.path().string()), (dir.path() / "discriminator").string());

    auto other_sharing = c;
    other_sharing.embedding_sharing = sharing == config::EmbeddingSharing::gdes ? config::EmbeddingSharing::shared
                                                                                  : config::EmbeddingSharing::gdes;
    const auto read = spec().directory_config(dir.path().string(), other_sharing);
    EXPECT_EQ(read.embedding_sharing, sharing);
    EXPECT_EQ(read.objective, config::Objective::rtd);
    EXPECT_EQ(read.hidden_size, c.hidden_size);
    EXPECT_DOUBLE_EQ(read.generator_hidden_ratio, c.generator_hidden_ratio);

    auto other = build_rtd_pair(c, 2);
    init_from_pretrained(other, dir.path().string());
    const auto want = model->named_parameters(), got = other->named_parameters();
    ASSERT_EQ(want.size(), got.size());
    for (const auto& p : want) {
      // The export holds the sum generator + delta: the delta comes back to fp32's rounding.
      if (p.key() == "word_embeddings_delta")
        EXPECT_TRUE(torch::allclose(p.value(), got[p.key()], 0, 1e-6)) << p.key();
      else
        EXPECT_TRUE(torch::equal(p.value(), got[p.key()])) << p.key();
    }
  }
}

// The two networks share one vocabulary: tokenizer files that differ are refused, naming them.
TEST_P(RtdPairDirectory, RefusesTokenizerFilesThatDiffer) {
  config::testing::TempDir dir;
  const auto c = tiny_rtd_pair(GetParam(), config::EmbeddingSharing::shared);
  spec().write_hf(build_rtd_pair(c, 1), dir.path().string(), WeightFormat::safetensors);
  std::ofstream(dir.path() / "generator" / "tokenizer.json") << "{\"a\": 1}";
  std::ofstream(dir.path() / "discriminator" / "tokenizer.json") << "{\"a\": 2}";
  const auto error = error_of([&] { spec().directory_config(dir.path().string(), c); });
  EXPECT_NE(error.find((dir.path() / "discriminator" / "tokenizer.json").string() + ": differs from"), std::string::npos)
      << error;
  EXPECT_NE(error.find("one vocabulary"), std::string::npos) << error;
  const auto init = error_of([&] { init_from_pretrained(build_rtd_pair(c, 2), dir.path().string()); });
  EXPECT_NE(init.find("one vocabulary"), std::string::npos) << init;
}

// A network whose shape cannot be built, or vocabularies of two sizes: refused, naming the file.
TEST_P(RtdPairDirectory, RefusesAShapeItCannotBuild) {
  const auto c = tiny_rtd_pair(GetParam(), config::EmbeddingSharing::shared);
  {
    config::testing::TempDir dir;
    spec().write_hf(build_rtd_pair(c, 1), dir.path().string(), WeightFormat::safetensors);
    const auto path = dir.path() / "discriminator" / "config.json";
    rewrite_json(path, [](nlohmann::json& j) { j["num_attention_heads"] = 3; });
    const auto error = error_of([&] { spec().directory_config(dir.path().string(), c); });
    EXPECT_NE(error.find(path.string() + ": hidden_size 64 is not divisible by num_attention_heads 3"),
              std::string::npos)
        << error;
  }
  {
    config::testing::TempDir dir;
    spec().write_hf(build_rtd_pair(c, 1), dir.path().string(), WeightFormat::safetensors);
    const auto path = dir.path() / "generator" / "config.json";
    rewrite_json(path, [](nlohmann::json& j) { j["vocab_size"] = kVocab + 1; });
    const auto error = error_of([&] { spec().directory_config(dir.path().string(), c); });
    EXPECT_NE(error.find("share one vocabulary"), std::string::npos) << error;
  }
}

// The estimate that bounds a file's memory counts the discriminator's delta under gdes.
TEST_P(RtdPairDirectory, EstimateCountsTheGdesDelta) {
  const auto shared = tiny_rtd_pair(GetParam(), config::EmbeddingSharing::shared);
  const auto gdes = tiny_rtd_pair(GetParam(), config::EmbeddingSharing::gdes);
  const int64_t rows = 30522;
  EXPECT_DOUBLE_EQ(estimated_parameters(gdes, rows) - estimated_parameters(shared, rows),
                   static_cast<double>(rows) * 32);
}

INSTANTIATE_TEST_SUITE_P(Pairs, RtdPairDirectory,
                         ::testing::Values(config::Architecture::electra, config::Architecture::deberta_v2),
                         [](const auto& info) { return std::string(config::to_string(info.param)); });

}  // namespace mlm::model::rtd_pair_directory
