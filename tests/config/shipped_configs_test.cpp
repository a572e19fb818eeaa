// The configs in configs/ load, validate and round-trip, hold the documented recipes, and
// docs/CONFIG.md lists every key with its true default.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "config_test_util.h"
#include "mlm/config/phases.h"
#include "mlm/config/source_weights.h"
#include "mlm/config/validate.h"
#include "mlm/test_paths.h"

namespace mlm::config {
namespace {

using testing::fingerprint;

std::string shipped(const std::string& name) {
  return std::string(MLM_SOURCE_DIR) + "/configs/" + name + ".yaml";
}

class ShippedConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedConfig, LoadsValidatesAndRoundTrips) {
  const RunConfig config = load_config(shipped(GetParam()));
  EXPECT_NO_THROW(validate_config(config));
  EXPECT_NO_THROW(require_training_data(config));
  const RunConfig back = load_config_from_string(dump_config(config), "<dump>");
  EXPECT_EQ(fingerprint(back), fingerprint(config));
  EXPECT_EQ(dump_config(back), dump_config(config));  // the phases too
}

INSTANTIATE_TEST_SUITE_P(Configs, ShippedConfig,
                         ::testing::Values("base", "large", "mini", "tiny", "electra-mini", "electra-small",
                                           "electra-base", "roberta-base", "modernbert-base", "modernbert-mini",
                                           "deberta-v3-xsmall", "deberta-v3-small", "deberta-v3-base",
                                           "deberta-v3-mini", "deberta-v3-rtd-mini"));

// The published DeBERTa-v3 shapes (microsoft/deberta-v3-*'s config.json).
TEST(ShippedConfigs, DebertaV3ShapesArePublished) {
  struct Shape {
    const char* name;
    int64_t layers, hidden, heads, intermediate;
  };
  for (const Shape& s : {Shape{"deberta-v3-xsmall", 12, 384, 6, 1536}, Shape{"deberta-v3-small", 6, 768, 12, 3072},
                         Shape{"deberta-v3-base", 12, 768, 12, 3072}}) {
    const ModelConfig m = load_config(shipped(s.name)).model;
    EXPECT_EQ(m.architecture, Architecture::deberta_v2) << s.name;
    EXPECT_EQ(m.num_hidden_layers, s.layers) << s.name;
    EXPECT_EQ(m.hidden_size, s.hidden) << s.name;
    EXPECT_EQ(m.num_attention_heads, s.heads) << s.name;
    EXPECT_EQ(m.intermediate_size, s.intermediate) << s.name;
    EXPECT_EQ(m.position_buckets, 256) << s.name;
    EXPECT_EQ(max_relative_positions(m), 512) << s.name;
    EXPECT_EQ(m.pos_att_type, (std::vector<std::string>{"p2c", "c2p"})) << s.name;
    EXPECT_TRUE(m.relative_attention && m.share_att_key && !m.position_biased_input) << s.name;
    EXPECT_EQ(m.norm_rel_ebd, "layer_norm") << s.name;
    EXPECT_EQ(m.type_vocab_size, 0) << s.name;
  }
}

TEST(ShippedConfigs, BaseIsBertBase) {
  const RunConfig c = load_config(shipped("base"));
  EXPECT_EQ(c.model.num_hidden_layers, 12);
  EXPECT_EQ(c.model.hidden_size, 768);
  EXPECT_EQ(c.model.num_attention_heads, 12);
  EXPECT_EQ(c.model.intermediate_size, 3072);
  EXPECT_EQ(c.data.seq_len, 128);
  EXPECT_EQ(c.optim.learning_rate, 1e-4);
  EXPECT_EQ(c.optim.betas[0], 0.9);
  EXPECT_EQ(c.optim.betas[1], 0.999);
  EXPECT_EQ(c.optim.eps, 1e-6);
  EXPECT_EQ(c.optim.weight_decay, 0.01);
  EXPECT_EQ(c.schedule.warmup_steps, 10000);
  EXPECT_EQ(c.schedule.decay, DecayKind::linear);
  EXPECT_EQ(c.train.precision, Precision::auto_detect);
  // The paper's phases: 90% of the steps at 128 tokens, the rest at 512, 256 sequences a step
  // and one schedule throughout.
  ASSERT_EQ(c.phases.size(), 2u);
  EXPECT_EQ(c.phases[0].steps + c.phases[1].steps, c.train.max_steps);
  EXPECT_EQ(c.phases[0].steps, 900000);
  const auto long_phase = phase_config(c, 1);
  EXPECT_EQ(long_phase.data.seq_len, 512);
  EXPECT_EQ(long_phase.train.micro_batch_size * long_phase.train.grad_accum_steps,
            c.train.micro_batch_size * c.train.grad_accum_steps);
  EXPECT_EQ(c.phases[1].lr_schedule, PhaseSchedule::continue_run);
  EXPECT_EQ(c.phases[1].optimizer, PhaseOptimizer::carry);
  // --set phases=[]: one phase of train.max_steps at 128.
  EXPECT_TRUE(load_config(shipped("base"), {"phases=[]"}).phases.empty());
}

TEST(ShippedConfigs, ModernBertBaseIsPretrainingContextExtensionDecay) {
  const RunConfig c = load_config(shipped("modernbert-base"));
  EXPECT_EQ(c.model.global_rope_theta, 160000.0);  // the hub model's, for --set phases=[]
  ASSERT_EQ(c.phases.size(), 3u);
  EXPECT_EQ(c.phases[0].steps + c.phases[1].steps + c.phases[2].steps, c.train.max_steps);
  const auto pretrain = phase_config(c, 0), extension = phase_config(c, 1), decay = phase_config(c, 2);
  EXPECT_EQ(pretrain.data.seq_len, 1024);
  EXPECT_EQ(pretrain.model.global_rope_theta, 10000.0);
  EXPECT_EQ(pretrain.schedule.decay, DecayKind::constant);
  EXPECT_EQ(extension.data.seq_len, 8192);
  EXPECT_EQ(extension.model.global_rope_theta, 160000.0);
  EXPECT_EQ(extension.optim.learning_rate, 3e-4);
  EXPECT_EQ(decay.schedule.decay, DecayKind::wsd);
  EXPECT_EQ(decay.schedule.decay_ratio, 1.0);
  // The same tokens per step in every phase.
  auto tokens = [](const RunConfig& p) {
    return p.data.seq_len * p.train.micro_batch_size * p.train.grad_accum_steps;
  };
  EXPECT_EQ(tokens(extension), tokens(pretrain));
  EXPECT_EQ(tokens(decay), tokens(pretrain));
}

TEST(ShippedConfigs, RobertaBaseHasRoomForThePositionOffset) {
  const RunConfig c = load_config(shipped("roberta-base"));
  EXPECT_EQ(c.model.architecture, Architecture::roberta);
  EXPECT_EQ(c.model.max_position_embeddings, 514);
  EXPECT_EQ(c.model.type_vocab_size, 1);
  EXPECT_EQ(c.model.layer_norm_eps, 1e-5);
  EXPECT_EQ(c.data.seq_len, 512);
  EXPECT_EQ(c.optim.betas[1], 0.98);
  // RoBERTa's own pad id 1 still fits: 512 + 1 + 1 = 514.
  EXPECT_NO_THROW(require_position_room(c.model, c.data.seq_len, 1));
  EXPECT_THROW(require_position_room(c.model, c.data.seq_len, 2), ConfigError);
}

TEST(ShippedConfigs, LargeIsBertLarge) {
  const RunConfig c = load_config(shipped("large"));
  EXPECT_EQ(c.model.num_hidden_layers, 24);
  EXPECT_EQ(c.model.hidden_size, 1024);
  EXPECT_EQ(c.model.num_attention_heads, 16);
  EXPECT_EQ(c.model.intermediate_size, 4096);
}

TEST(ShippedConfigs, MiniIsBertAtTheQuickstartsBudget) {
  const RunConfig c = load_config(shipped("mini"));
  EXPECT_EQ(c.model.num_hidden_layers, 4);
  EXPECT_EQ(c.model.hidden_size, 256);
  EXPECT_EQ(c.model.num_attention_heads, 4);
  EXPECT_EQ(c.model.intermediate_size, 1024);
  EXPECT_EQ(c.data.train_files, std::vector<std::string>{"data/sample/train.txt"});
  EXPECT_EQ(c.data.valid_files, std::vector<std::string>{"data/sample/valid.txt"});
  EXPECT_EQ(c.tokenizer.model, "data/sample/spm_mini.model");
  EXPECT_EQ(c.tokenizer.vocab_size, 8000);
  EXPECT_EQ(c.data.seq_len, 128);
  EXPECT_EQ(c.train.micro_batch_size, 32);
  EXPECT_EQ(c.train.precision, Precision::auto_detect);
  // The recipe docs/RECIPES.md's BERT figures were measured with (under 10 minutes on 2 cores).
  EXPECT_EQ(c.optim.learning_rate, 1e-3);
  EXPECT_EQ(c.schedule.warmup_steps, 50);
  EXPECT_EQ(c.train.max_steps, 450);
  EXPECT_EQ(c.eval.every_steps, 150);
  EXPECT_EQ(c.eval.max_batches, 20);
  EXPECT_EQ(c.checkpoint.every_steps, 150);
  EXPECT_EQ(c.logging.every_steps, 20);
  EXPECT_EQ(c.train.output_dir, "runs/mini");
}

// The paper's shapes (Clark et al. 2020, table 6) and its generator sizes.
TEST(ShippedConfigs, ElectraSmallAndBaseAreThePapers) {
  const RunConfig small = load_config(shipped("electra-small"));
  EXPECT_EQ(small.model.architecture, Architecture::electra);
  EXPECT_EQ(small.model.objective, Objective::rtd);
  EXPECT_EQ(small.model.num_hidden_layers, 12);
  EXPECT_EQ(small.model.hidden_size, 256);
  EXPECT_EQ(small.model.embedding_size, 128);
  const auto g = generator_shape(small.model);
  EXPECT_EQ(g.hidden_size, 64);
  EXPECT_EQ(g.num_attention_heads, 1);
  EXPECT_EQ(g.intermediate_size, 256);
  EXPECT_EQ(small.model.rtd_weight, 50.0);
  EXPECT_EQ(small.masking.mask_replace_prob, 0.85);
  EXPECT_EQ(small.masking.random_replace_prob, 0.0);

  const RunConfig base = load_config(shipped("electra-base"));
  EXPECT_EQ(base.model.hidden_size, 768);
  EXPECT_EQ(base.model.embedding_size, 768);
  const auto gb = generator_shape(base.model);
  EXPECT_EQ(gb.hidden_size, 256);  // 1/3, as google/electra-base-generator
  EXPECT_EQ(gb.num_attention_heads, 4);
  EXPECT_EQ(gb.intermediate_size, 1024);
  EXPECT_EQ(gb.num_hidden_layers, 12);
}

// The quickstart (scripts/quickstart.sh) trains modernbert-mini on mini's budget, so the
// docs/RECIPES.md's comparison with BERT is like for like.
TEST(ShippedConfigs, QuickstartIsModernBertOnMinisBudget) {
  const RunConfig mini = load_config(shipped("mini"));
  const RunConfig quick = load_config(shipped("modernbert-mini"));
  EXPECT_EQ(quick.model.architecture, Architecture::modernbert);
  EXPECT_EQ(quick.tokenizer.model, mini.tokenizer.model);
  EXPECT_EQ(quick.data.train_files, mini.data.train_files);
  EXPECT_EQ(quick.data.seq_len, mini.data.seq_len);
  EXPECT_EQ(quick.train.micro_batch_size, mini.train.micro_batch_size);
  EXPECT_EQ(quick.train.max_steps, mini.train.max_steps);
  EXPECT_EQ(quick.optim.learning_rate, mini.optim.learning_rate);
  EXPECT_EQ(quick.masking.mlm_probability, 0.3);
  EXPECT_EQ(quick.train.output_dir, "runs/modernbert-mini");
}

// ELECTRA-mini trains on BERT-mini's budget, for docs/RECIPES.md's comparison.
TEST(ShippedConfigs, ElectraMiniMatchesMini) {
  const RunConfig mini = load_config(shipped("mini"));
  const RunConfig electra = load_config(shipped("electra-mini"));
  EXPECT_EQ(electra.model.hidden_size, mini.model.hidden_size);
  EXPECT_EQ(electra.model.num_hidden_layers, mini.model.num_hidden_layers);
  EXPECT_EQ(electra.train.max_steps, mini.train.max_steps);
  EXPECT_EQ(electra.train.micro_batch_size, mini.train.micro_batch_size);
  EXPECT_EQ(electra.data.seq_len, mini.data.seq_len);
  EXPECT_EQ(electra.data.train_files, mini.data.train_files);
  EXPECT_EQ(electra.tokenizer.model, mini.tokenizer.model);
  // The sweep's recipe (docs/ELECTRA.md): at 15% and temperature 1 the discriminator collapsed.
  EXPECT_EQ(electra.masking.mlm_probability, 0.3);
  EXPECT_EQ(electra.model.rtd_temperature, 2.0);
}

TEST(ShippedConfigs, TinyIsForTests) {
  const RunConfig c = load_config(shipped("tiny"));
  EXPECT_EQ(c.model.num_hidden_layers, 2);
  EXPECT_EQ(c.model.hidden_size, 128);
  EXPECT_EQ(c.model.num_attention_heads, 2);
  EXPECT_EQ(c.model.intermediate_size, 512);
  EXPECT_EQ(c.tokenizer.vocab_size, 200);  // the fixture corpus supports ~290 pieces
  EXPECT_EQ(c.data.seq_len, 64);
  EXPECT_EQ(c.train.micro_batch_size, 8);
  EXPECT_EQ(c.train.precision, Precision::fp32);
  EXPECT_EQ(c.train.max_steps, 20);
  EXPECT_EQ(c.data.num_workers, 1);
  EXPECT_EQ(c.train.output_dir, "runs/tiny");
  EXPECT_EQ(c.data.train_files, std::vector<std::string>{"tests/fixtures/corpus/train.txt"});
  EXPECT_EQ(c.data.valid_files, std::vector<std::string>{"tests/fixtures/corpus/valid.txt"});
}

// docs/CONFIG.md has one table per section, rows "| `key` | type | `default` | ...": every
// key appears, under its own section, with the default dump_config prints.
// configs/multilingual-mini.yaml is mmBERT's schedule at mini size: three phases, the
// temperature annealed, a language entering in the last, the masking rate lowered. (Its
// corpus is made by scripts/get_multilingual_corpus.sh, so its files are not required here.)
TEST(ShippedConfigs, MultilingualMiniIsMmBertsSchedule) {
  const RunConfig run = load_config(shipped("multilingual-mini"));
  EXPECT_NO_THROW(validate_config(run));
  ASSERT_EQ(phase_count(run), 3);
  std::vector<double> temperatures, masking, dutch;
  for (int64_t p = 0; p < 3; ++p) {
    const RunConfig phase = phase_config(run, p);
    temperatures.push_back(phase.data.temperature);
    masking.push_back(phase.masking.mlm_probability);
    dutch.push_back(source_base_weights(phase.data).at(3));
  }
  EXPECT_EQ(source_name(run.data, 3), "nl");
  EXPECT_EQ(temperatures, (std::vector<double>{0.7, 0.5, 0.3}));
  EXPECT_EQ(masking, (std::vector<double>{0.3, 0.15, 0.05}));
  EXPECT_EQ(dutch, (std::vector<double>{0, 0, 1}));
}

TEST(ConfigDocs, EveryKeyWithItsDefault) {
  std::ifstream in(std::string(MLM_SOURCE_DIR) + "/docs/CONFIG.md");
  ASSERT_TRUE(in) << "docs/CONFIG.md is missing";
  std::map<std::string, std::string> documented;  // section.key -> default cell
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.rfind("## `", 0) == 0) {
      section = line.substr(4, line.find('`', 4) - 4);
    } else if (line.rfind("## ", 0) == 0) {
      section.clear();  // a heading that is not a section's (the phases' own table)
    } else if (line.rfind("| `", 0) == 0 && !section.empty()) {
      std::vector<std::string> cells;
      std::stringstream row(line.substr(1));
      for (std::string cell; std::getline(row, cell, '|');) {
        const auto first = cell.find_first_not_of(' ');
        const auto last = cell.find_last_not_of(' ');
        cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
      }
      ASSERT_GE(cells.size(), 3u) << line;
      const std::string key = cells[0].substr(1, cells[0].size() - 2);
      std::string value = cells[2];
      if (value.size() >= 2 && value.front() == '`' && value.back() == '`') {
        value = value.substr(1, value.size() - 2);
      }
      EXPECT_TRUE(documented.emplace(section + "." + key, value).second)
          << section << "." << key << " documented twice";
    }
  }
  // The defaults as dump_config writes them.
  std::map<std::string, std::string> defaults;
  std::stringstream dump(dump_config(RunConfig{}));
  while (std::getline(dump, line)) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      section = line.substr(0, line.size() - 1);
      continue;
    }
    const auto colon = line.find(": ");
    defaults[section + "." + line.substr(2, colon - 2)] = line.substr(colon + 2);
  }
  for (const auto& key : known_keys()) {
    auto it = documented.find(key);
    if (it == documented.end()) {
      ADD_FAILURE() << key << " is missing from docs/CONFIG.md";
      continue;
    }
    EXPECT_EQ(it->second, defaults[key]) << "default of " << key << " in docs/CONFIG.md";
  }
  for (const auto& [key, value] : documented) {
    EXPECT_TRUE(defaults.count(key)) << key << " is documented but not a config key";
  }
}

}  // namespace
}  // namespace mlm::config
