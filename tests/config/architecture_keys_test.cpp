// Every architecture has its model.* keys registered (src/model/architecture_keys.cpp), once, and
// the model section's derived values ask them (config/architecture_keys.h).
#include <gtest/gtest.h>

#include <set>

#include "mlm/config/architecture_keys.h"

namespace mlm::config {
namespace {

TEST(ArchitectureKeys, EveryArchitectureRegisteredOnce) {
  std::set<Architecture> registered;
  for (const auto* keys : registered_architecture_keys())
    EXPECT_TRUE(registered.insert(keys->architecture()).second) << to_string(keys->architecture()) << " twice";
  for (size_t i = 0; i < EnumNames<Architecture>::names.size(); ++i) {
    const auto architecture = static_cast<Architecture>(i);
    EXPECT_TRUE(registered.count(architecture)) << to_string(architecture) << " has no keys";
    EXPECT_EQ(architecture_keys(architecture).architecture(), architecture);
  }
}

ModelConfig of(Architecture architecture) {
  ModelConfig c;
  c.architecture = architecture;
  return c;
}

TEST(ArchitectureKeys, PositionOffsetFollowsThePadIdForRobertaOnly) {
  EXPECT_EQ(position_offset(of(Architecture::roberta), 1), 2);
  EXPECT_EQ(position_offset(of(Architecture::xlm_roberta), 1), 2);
  EXPECT_EQ(max_sequence_length(of(Architecture::roberta), 1), 510);
  for (auto a : {Architecture::bert, Architecture::modernbert, Architecture::electra, Architecture::deberta_v2})
    EXPECT_EQ(position_offset(of(a), 1), 0) << to_string(a);
}

TEST(ArchitectureKeys, FactorizedEmbeddingsForElectraAndDeberta) {
  for (auto a : {Architecture::electra, Architecture::deberta_v2}) {
    auto c = of(a);
    EXPECT_EQ(factorized_embedding_size(c), 768) << to_string(a);  // 0: hidden_size
    c.embedding_size = 128;
    EXPECT_EQ(factorized_embedding_size(c), 128) << to_string(a);
  }
  auto bert = of(Architecture::bert);
  bert.embedding_size = 768;
  EXPECT_EQ(factorized_embedding_size(bert), 0);
}

TEST(ArchitectureKeys, GeneratorShapeByArchitecture) {
  // ELECTRA: a quarter as wide, as deep, one head per 64, 4 x width.
  const auto electra = generator_shape(of(Architecture::electra));
  EXPECT_EQ(electra.hidden_size, 192);
  EXPECT_EQ(electra.num_hidden_layers, 12);
  EXPECT_EQ(electra.num_attention_heads, 3);
  EXPECT_EQ(electra.intermediate_size, 768);
  // DeBERTa-v3: as wide, half as deep, the discriminator's heads and intermediate size.
  const auto deberta = generator_shape(of(Architecture::deberta_v2));
  EXPECT_EQ(deberta.hidden_size, 768);
  EXPECT_EQ(deberta.num_hidden_layers, 6);
  EXPECT_EQ(deberta.num_attention_heads, 12);
  EXPECT_EQ(deberta.intermediate_size, 3072);
  // DeBERTa narrower than its discriminator: ELECTRA's derivation.
  auto narrow = of(Architecture::deberta_v2);
  narrow.generator_hidden_ratio = 0.5;
  EXPECT_EQ(generator_shape(narrow).num_attention_heads, 6);
  EXPECT_EQ(generator_shape(narrow).intermediate_size, 1536);
}

TEST(ArchitectureKeys, TokenTypesAndPhaseKeys) {
  EXPECT_EQ(architecture_keys(Architecture::deberta_v2).min_type_vocab_size(), 0);
  EXPECT_EQ(architecture_keys(Architecture::bert).min_type_vocab_size(), 1);
  const auto rope = architecture_keys(Architecture::modernbert).phase_keys();
  EXPECT_EQ(rope.keys, (std::vector<std::string>{"global_rope_theta", "local_rope_theta"}));
  EXPECT_TRUE(architecture_keys(Architecture::bert).phase_keys().keys.empty());
}

}  // namespace
}  // namespace mlm::config
