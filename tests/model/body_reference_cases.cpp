// The reference-parity cases of each registered architecture's body (body_reference.h), keyed by
// model.architecture's value. BERT's reference is tests/reference/make_bert_reference.py's
// committed fixtures (PyTorch nn modules on HF BERT's math, pre-LN and the NSP head included);
// the others' is `transformers` itself, run live through tests/reference/hf_client.py on the
// model's export, which model.init_from then reads back bit for bit.
#include "model/body_reference.h"

#include <gtest/gtest.h>

#include "mlm/model/bert/bert.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/model/token_layout.h"
#include "model_test_util.h"

namespace mlm::model::body_reference {
namespace {

namespace fs = std::filesystem;
using testing::tiny_model_config;
constexpr int64_t kVocab = testing::kTinyVocab;  // 97

// ---- the live reference ------------------------------------------------------------------------

/// `in` as hf_client.py's *_reference commands read a batch: the ids and padding, labels [B, S]
/// (the selected positions' labels, -100 elsewhere), and the token types and document ids where
/// the inputs have them.
TensorDict batch_of(const MlmInputs& in) {
  auto labels = torch::full({in.input_ids.numel()}, -100, torch::kLong);
  labels.index_put_({in.masked_positions}, in.masked_labels);
  TensorDict batch = {{"input_ids", in.input_ids},
                      {"attention_mask", in.attention_mask},
                      {"labels", labels.reshape(in.input_ids.sizes())}};
  if (in.token_type_ids.defined()) batch.emplace_back("token_type_ids", in.token_type_ids);
  if (in.document_ids.defined()) batch.emplace_back("document_ids", in.document_ids);
  return batch;
}

/// A case whose reference is transformers': seeded with `seed`, the model of `config` built,
/// `randomise`d and given `inputs(config)`; hf_client.py `subcommand` run on its export; the
/// export read back by model.init_from (into unpadded vocabulary rows) is the model bit for bit.
BodyCase live(std::string name, const std::string& subcommand, uint64_t seed, int64_t pad, config::ModelConfig config,
              std::function<void(MaskedLm&)> randomise, std::function<MlmInputs()> inputs) {
  return {std::move(name), [=](const fs::path& dir) {
            torch::manual_seed(seed);
            auto model = make_masked_lm(config, kVocab, pad);
            randomise(model);
            model->train();  // dropouts are 0: training mode must be exact
            ReferenceRun run{model, inputs(), {}};
            run.ref = testing::run_hf_reference(model, batch_of(run.in), subcommand, dir);

            torch::manual_seed(seed + 1);
            auto reload_config = config;
            reload_config.pad_vocab_multiple = 1;
            auto reloaded = make_masked_lm(reload_config, kVocab, pad);
            init_from_pretrained(reloaded, dir.string());
            const auto a = model->hf_state_dict(), b = reloaded->hf_state_dict();
            EXPECT_EQ(a.size(), b.size());
            for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
              EXPECT_EQ(a[i].first, b[i].first);
              EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first << " read back differs";
            }
            return run;
          }};
}

/// Weights far from their initial 1 / 0 / small values, so that a wrong wiring shows.
void randomise_all(MaskedLm& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.5);
}

constexpr int64_t kBatch = 3, kSeq = 40;

/// Random ids [3, 40] with labels at ~30% of the real tokens; rows 1 and 2 end in padding (the
/// pad id 0) when `padded`, row 2's longer than ModernBERT's half window.
MlmInputs padded_inputs(bool padded) {
  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong);
  in.attention_mask = torch::ones({kBatch, kSeq}, torch::kLong);
  if (padded) {
    in.attention_mask[1].narrow(0, 30, 10).zero_();
    in.attention_mask[2].narrow(0, 13, 27).zero_();
    in.input_ids.masked_fill_(in.attention_mask.eq(0), 0);
  }
  in.has_padding = padded;
  const auto selected = (torch::rand({kBatch, kSeq}) < 0.3).logical_and(in.attention_mask.eq(1));
  in.masked_positions = selected.reshape(-1).nonzero().reshape(-1);
  in.masked_labels = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong).reshape(-1).index_select(0, in.masked_positions);
  EXPECT_GT(in.masked_positions.numel(), 10);
  return in;
}

// ---- BERT: make_bert_reference.py's fixtures -----------------------------------------------------

BodyCase bert(const char* norm, bool padded, bool sparse_head, int64_t pad_multiple) {
  std::string name = std::string(norm) + (padded ? "_pad" : "_nopad") + (sparse_head ? "_sparse" : "_dense") +
                     "_vocabx" + std::to_string(pad_multiple);
  return {name, [=](const fs::path&) {
            auto cfg = testing::tiny_config(std::string(norm) == "post" ? config::NormPosition::post
                                                                        : config::NormPosition::pre);
            cfg.sparse_head = sparse_head;
            cfg.pad_vocab_multiple = pad_multiple;
            torch::manual_seed(0);
            BertForPreTraining model(cfg, kVocab, testing::kTinyPad);
            load_model_pt(model, testing::fixture(std::string("bert_") + norm + "_weights.pt"));
            model->train();  // dropout is 0: training mode must be exact too
            auto ref = testing::load_fixture(std::string("bert_") + norm + (padded ? "_pad" : "_nopad") + "_case.pt");
            ReferenceRun run{model, testing::reference_inputs(ref, padded, model->has_nsp_head()), ref};
            for (const char* key : {"logits", "loss_sum", "correct"}) run.ref[key] = ref[std::string("mlm_") + key];
            return run;
          }};
}

BodyReference bert_reference() {
  BodyReference r;
  for (const char* norm : {"post", "pre"})  // post: with the NSP head
    r.cases.insert(r.cases.end(), {bert(norm, true, true, 64), bert(norm, true, false, 1), bert(norm, false, true, 1),
                                   bert(norm, false, false, 64)});
  r.after_gradients = [](ReferenceRun& run, int checked, const fs::path&) {
    EXPECT_GE(checked, 14);
    const int64_t padded = run.model->padded_vocab_size();
    if (padded > kVocab) {
      auto* model = dynamic_cast<BertForPreTrainingImpl*>(run.model.get());
      ASSERT_NE(model, nullptr);
      EXPECT_EQ(model->predictions->bias.grad().narrow(0, kVocab, padded - kVocab).abs().sum().item<double>(), 0.0);
    }
  };
  return r;
}

// ---- RoBERTa and XLM-R: RobertaForMaskedLM / XLMRobertaForMaskedLM -------------------------------

constexpr int64_t kRobertaPad = 1;  // RoBERTa's vocabulary has <pad> at 1

struct RobertaShape {
  config::Architecture architecture;
  int64_t batch, seq;
  bool padded, sparse_head;
  config::Activation act;  // the encoder's; RobertaLMHead's stays the exact GELU
};

config::ModelConfig tiny_roberta(const RobertaShape& s) {
  auto m = tiny_model_config(s.architecture);
  m.num_hidden_layers = 2;
  m.intermediate_size = 64;
  m.max_position_embeddings = s.seq + kRobertaPad + 1;  // RoBERTa's 514 for 512 tokens
  m.type_vocab_size = 1;
  m.layer_norm_eps = 1e-5;
  m.hidden_act = s.act;
  m.sparse_head = s.sparse_head;
  return m;
}

// The padded vocabulary rows and the padding position's row as the model keeps them (zero).
void scramble_roberta(MaskedLm& masked_lm) {
  randomise_all(masked_lm);
  torch::NoGradGuard no_grad;
  auto* model = dynamic_cast<BertForPreTrainingImpl*>(masked_lm.get());
  model->word_embeddings().narrow(0, kVocab, model->padded_vocab_size() - kVocab).zero_();
  model->bert->embeddings->zero_padding_position();
}

// Padding the pad id 1, rows of every length down to a few tokens: over half of the batch is
// padding, so that the larger case runs its layers unpadded (TokenLayout). The last row is padded
// on the left, where RoBERTa's positions (counted over the tokens) and 0..S-1 part.
MlmInputs roberta_batch(const RobertaShape& s) {
  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {s.batch, s.seq}, torch::kLong);
  in.attention_mask = torch::ones({s.batch, s.seq}, torch::kLong);
  if (s.padded) {
    for (int64_t b = 1; b < s.batch; ++b) {
      const int64_t length = std::max<int64_t>(4, s.seq / (2 * b));
      in.attention_mask[b].narrow(0, b + 1 == s.batch ? 0 : length, s.seq - length).zero_();
    }
    in.input_ids.masked_fill_(in.attention_mask.eq(0), kRobertaPad);
  }
  in.has_padding = s.padded;
  const auto selected = (torch::rand({s.batch, s.seq}) < 0.3).logical_and(in.attention_mask.eq(1));
  in.masked_positions = selected.reshape(-1).nonzero().reshape(-1);
  in.masked_labels = torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong);
  EXPECT_GE(in.masked_positions.numel(), 4);
  if (s.batch * s.seq >= 256)
    EXPECT_TRUE(TokenLayout::of(in.attention_mask, in.has_padding).unpadded()) << "meant to run unpadded";
  return in;
}

BodyCase roberta(std::string name, const RobertaShape& s) {
  return live(std::move(name), "roberta_reference", 17, kRobertaPad, tiny_roberta(s), scramble_roberta,
              [s] { return roberta_batch(s); });
}

BodyReference roberta_reference(std::vector<BodyCase> cases) {
  BodyReference r;
  r.cases = std::move(cases);
  r.gradients = GradientTolerance::relative_to_largest;
  r.after_gradients = [](ReferenceRun& run, int checked, const fs::path&) {
    // Every gradient but the tied decoder's two copies (the embeddings' and lm_head.bias's own).
    EXPECT_EQ(checked, static_cast<int>(run.model->hf_gradients().size()) - 2);
    auto* model = dynamic_cast<BertForPreTrainingImpl*>(run.model.get());
    ASSERT_NE(model, nullptr);
    const auto positions = model->bert->embeddings->position_embeddings->weight.grad();
    EXPECT_EQ(positions[kRobertaPad].abs().sum().item<double>(), 0.0) << "the padding position learns nothing";
  };
  return r;
}

// ---- ModernBERT: ModernBertForMaskedLM -----------------------------------------------------------

struct ModernBertShape {
  bool padded;       // rows 1 and 2 end in padding
  bool documents;    // 2-3 documents per row, model.attend_across_documents false
  bool sparse_head;
  bool biases;       // every optional bias on, tanh GELU, layer count not a multiple of 3
};

config::ModelConfig tiny_modernbert(const ModernBertShape& s) {
  auto m = tiny_model_config(config::Architecture::modernbert);
  m.num_hidden_layers = s.biases ? 5 : 4;  // global layers 0 and 3; the others local
  m.local_attention = 16;  // |q - k| <= 8, far shorter than the 40 positions
  m.layer_norm_eps = 1e-5;
  m.sparse_head = s.sparse_head;
  m.attend_across_documents = !s.documents;
  if (s.biases) {
    m.norm_bias = m.attention_bias = m.mlp_bias = m.classifier_bias = true;
    m.hidden_act = config::Activation::gelu_tanh;
    m.global_rope_theta = 5000.0;
    m.local_rope_theta = 300.0;
  }
  return m;
}

/// Documents of 11-29 tokens when `documents`.
MlmInputs modernbert_batch(const ModernBertShape& s) {
  auto in = padded_inputs(s.padded);
  if (!s.documents) return in;
  in.document_ids = torch::zeros({kBatch, kSeq}, torch::kLong);
  in.document_ids[0].narrow(0, 11, 29).fill_(1);
  in.document_ids[0].narrow(0, 25, 15).fill_(2);
  in.document_ids[1].narrow(0, 20, 20).fill_(1);
  in.document_ids[2].narrow(0, 6, 34).fill_(1);
  in.document_ids.masked_fill_(in.attention_mask.eq(0), 0);
  return in;
}

BodyCase modernbert(std::string name, const ModernBertShape& s) {
  return live(std::move(name), "modernbert_reference", 7, 0, tiny_modernbert(s), randomise_all,
              [s] { return modernbert_batch(s); });
}

// ---- DeBERTa-v2/v3: DebertaV2ForMaskedLM ---------------------------------------------------------

struct DebertaShape {
  bool padded;                   // rows 1 and 2 end in padding
  bool v3;                       // DeBERTa-v3's options: buckets, shared keys, p2c|c2p, rel norm,
                                 //   no absolute positions, no token types
  int64_t embedding_size;        // 0 = hidden_size
  std::vector<std::string> pos_att_type;
  bool relative_attention = true;
};

config::ModelConfig tiny_deberta(const DebertaShape& s) {
  auto m = tiny_model_config(config::Architecture::deberta_v2);
  m.num_hidden_layers = 3;
  m.layer_norm_eps = 1e-7;
  m.embedding_size = s.embedding_size;
  m.pos_att_type = s.pos_att_type;
  m.relative_attention = s.relative_attention;
  if (s.v3) {
    m.position_buckets = 16;         // exact within 8, log-spaced beyond
    m.max_relative_positions = 24;   // shorter than the 40 positions: the far buckets clamp
    m.share_att_key = true;
    m.norm_rel_ebd = "layer_norm";
    m.position_biased_input = false;
    m.type_vocab_size = 0;
  } else {
    m.position_buckets = -1;         // exact distances, clamped at 12
    m.max_relative_positions = 12;
    m.share_att_key = false;
    m.norm_rel_ebd = "none";
    m.position_biased_input = true;
    m.type_vocab_size = 2;
    m.hidden_act = config::Activation::gelu_tanh;
  }
  return m;
}

/// Token types (the second segment from position 17) where the model has a token-type table.
MlmInputs deberta_batch(const DebertaShape& s, bool types) {
  auto in = padded_inputs(s.padded);
  if (!types) return in;
  in.token_type_ids = torch::zeros({kBatch, kSeq}, torch::kLong);
  in.token_type_ids.narrow(1, 17, kSeq - 17).fill_(1);
  in.token_type_ids.masked_fill_(in.attention_mask.eq(0), 0);
  return in;
}

BodyCase deberta(std::string name, const DebertaShape& s) {
  const auto config = tiny_deberta(s);
  return live(std::move(name), "deberta_reference", 11, 0, config, randomise_all,
              [s, types = config.type_vocab_size > 0] { return deberta_batch(s, types); });
}

/// Every parameter's gradient compared.
void every_parameter(ReferenceRun& run, int checked, const fs::path&) {
  EXPECT_EQ(checked, static_cast<int>(run.model->parameters().size()));
}

}  // namespace

const std::map<std::string, BodyReference>& body_references() {
  using config::Activation;
  using config::Architecture;
  static const std::map<std::string, BodyReference> table = {
      {"bert", bert_reference()},
      {"roberta",
       roberta_reference({roberta("pad_sparse", {Architecture::roberta, 3, 20, true, true, Activation::gelu}),
                          roberta("nopad_dense_tanh", {Architecture::roberta, 3, 20, false, false, Activation::gelu_tanh}),
                          roberta("unpadded_layers", {Architecture::roberta, 4, 64, true, true, Activation::gelu})})},
      {"xlm_roberta",
       roberta_reference({roberta("pad_dense", {Architecture::xlm_roberta, 3, 20, true, false, Activation::gelu})})},
      {"modernbert",
       {.cases = {modernbert("nopad_dense", {false, false, false, false}),
                  modernbert("nopad_sparse", {false, false, true, false}),
                  modernbert("pad_sparse", {true, false, true, false}),
                  modernbert("documents_dense", {false, true, false, false}),
                  modernbert("documents_pad_sparse", {true, true, true, false}),
                  modernbert("biases_pad_documents_sparse", {true, true, true, true})},
        .after_gradients = every_parameter}},
      {"deberta_v2",
       {.cases = {deberta("v3_padded", {true, true, 0, {"p2c", "c2p"}}),
                  deberta("v3_nopad_embedding_projection", {false, true, 24, {"p2c", "c2p"}}),
                  deberta("v2_separate_keys_c2p_types_padded", {true, false, 0, {"c2p"}}),
                  deberta("v2_p2c_projection_types", {false, false, 16, {"p2c"}}),
                  deberta("absolute_only_padded", {true, false, 0, {"p2c", "c2p"}, false})},
        .after_gradients = every_parameter}},
      {"electra",
       {.elsewhere = "ELECTRA is pretrained as a generator and discriminator pair; both networks, the "
                     "generator's ElectraForMaskedLM among them, are held to transformers by the pair's "
                     "reference test (tests/model/electra_reference_test.cpp)"}},
  };
  return table;
}

}  // namespace mlm::model::body_reference
