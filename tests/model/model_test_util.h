#pragma once
// Helpers shared by the model tests: tensor comparison that names the first bad element,
// the tiny reference configuration and fixture loading.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "mlm/config/run_config.h"
#include "mlm/model/bert/bert.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/model/hf/tensor_file.h"
#include "mlm/model/pretrained/export_hf.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/test_paths.h"

namespace mlm::model::testing {

/// A live reference: `model`'s export (mlm-export's writer: config.json and the weights) and
/// `batch` written into `dir`, `tests/reference/hf_client.py <subcommand> DIR` run, and
/// DIR/reference.safetensors returned by name (empty, with the script's output as the failure,
/// when it fails).
inline std::map<std::string, torch::Tensor> run_hf_reference(MaskedLm model, const TensorDict& batch,
                                                              const std::string& subcommand,
                                                              const std::filesystem::path& dir) {
  write_hf_model(model, dir.string(), WeightFormat::safetensors);
  write_safetensors((dir / "batch.safetensors").string(), batch);
  const auto quote = [](const std::string& s) { return "'" + s + "'"; };
  const std::string command = quote(MLM_PYTHON) + " " + quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") +
                              " " + subcommand + " " + quote(dir.string()) + " > " + quote((dir / "py.out").string()) +
                              " 2>&1";
  std::map<std::string, torch::Tensor> ref;
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << std::ifstream(dir / "py.out").rdbuf();
    return ref;
  }
  for (auto& [k, v] : read_safetensors((dir / "reference.safetensors").string())) ref[k] = v;
  return ref;
}

/// Expects same shape and |got - want| <= atol everywhere; on failure prints the first bad
/// flat index, both values and the largest difference.
inline void expect_tensor_near(const torch::Tensor& got_in, const torch::Tensor& want_in, double atol,
                               const std::string& what) {
  auto got = got_in.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  auto want = want_in.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  ASSERT_EQ(got.sizes(), want.sizes()) << what << ": shape";
  if (got.numel() == 0) return;
  auto diff = (got - want).abs().reshape({-1});
  auto bad = (diff > atol).logical_or(diff.isnan()).nonzero();
  if (bad.numel() > 0) {
    const int64_t i = bad[0][0].item<int64_t>();
    ADD_FAILURE() << what << ": " << bad.size(0) << " of " << got.numel() << " elements differ by more than "
                  << atol << "; first at flat index " << i << ": got " << got.reshape({-1})[i].item<double>()
                  << ", want " << want.reshape({-1})[i].item<double>() << "; max diff "
                  << diff.max().item<double>();
  }
}

/// The tiny BERT of tests/reference/make_bert_reference.py.
inline config::ModelConfig tiny_config(config::NormPosition norm) {
  config::ModelConfig c;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 64;
  c.max_position_embeddings = 16;
  c.type_vocab_size = 2;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.norm = norm;
  c.hidden_act = norm == config::NormPosition::post ? config::Activation::gelu : config::Activation::gelu_tanh;
  c.objective = norm == config::NormPosition::post ? config::Objective::nsp : config::Objective::mlm;
  return c;
}
/// A live case's tiny model of `architecture` (the body references', the distillation
/// tests'): `hidden` wide in `heads` heads, `layers` deep, no dropout (training mode must be
/// exact), padded vocabulary rows (they must stay out of everything).
inline config::ModelConfig tiny_model_config(config::Architecture architecture, int64_t layers = 2, int64_t hidden = 32,
                                             int64_t heads = 4) {
  config::ModelConfig m;
  m.architecture = architecture;
  m.num_hidden_layers = layers;
  m.hidden_size = hidden;
  m.num_attention_heads = heads;
  m.intermediate_size = 48;
  m.max_position_embeddings = 64;
  m.attention_probs_dropout_prob = 0.0;
  m.hidden_dropout_prob = 0.0;
  m.pad_vocab_multiple = 8;
  return m;
}
constexpr int64_t kTinyVocab = 97;
constexpr int64_t kTinyPad = 0;

inline std::string fixture(const std::string& name) { return std::string(MLM_FIXTURES_DIR) + "/model/" + name; }

inline std::map<std::string, torch::Tensor> load_fixture(const std::string& name) {
  std::map<std::string, torch::Tensor> out;
  for (auto& [k, v] : read_tensor_file(fixture(name))) out[k] = v;
  return out;
}

/// A reference case's inputs (make_bert_reference.py) on `device`, with NSP labels for a model
/// with that head.
inline MlmInputs reference_inputs(std::map<std::string, torch::Tensor>& ref, bool padded, bool nsp,
                                   const torch::Device& device = torch::kCPU) {
  MlmInputs in;
  in.input_ids = ref["input_ids"].to(device);
  in.token_type_ids = ref["token_type_ids"].to(device);
  in.attention_mask = ref["attention_mask"].to(device);
  in.has_padding = padded;
  in.masked_positions = ref["masked_positions"].to(device);
  in.masked_labels = ref["masked_labels"].to(device);
  if (nsp) in.nsp_labels = ref["nsp_labels"].to(device);
  return in;
}

/// Expects the model's gradients (Hugging Face key names) to match every "grad.<key>" of the
/// reference case within `atol`; returns how many were compared.
inline int expect_reference_gradients(MaskedLm model, const std::map<std::string, torch::Tensor>& ref,
                                      double atol) {
  std::map<std::string, torch::Tensor> grads;
  for (auto& [key, grad] : model->hf_gradients()) grads[key] = grad;
  int checked = 0;
  for (const auto& [key, want] : ref) {
    if (key.rfind("grad.", 0) != 0) continue;
    const auto& got = grads[key.substr(5)];
    EXPECT_TRUE(got.defined()) << key;
    if (!got.defined()) continue;
    expect_tensor_near(got, want, atol, key);
    ++checked;
  }
  return checked;
}

/// `sparse` (model.sparse_head: the last layer and the head on the selected positions) gives
/// `dense`'s logits for `in` and, after the loss's backward, every parameter's gradient.
/// Both hold the same weights and are in training mode.
inline void expect_sparse_matches_dense(MaskedLm sparse, MaskedLm dense, const MlmInputs& in) {
  auto want = dense->forward(in, true);
  auto got = sparse->forward(in, true);
  expect_tensor_near(got.mlm_logits, want.mlm_logits, 1e-5, "logits");
  want.mlm_loss_sum.backward();
  got.mlm_loss_sum.backward();
  const auto dense_params = dense->named_parameters();
  for (const auto& item : sparse->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    expect_tensor_near(item.value().grad(), dense_params[item.key()].grad(), 1e-5, "gradient of " + item.key());
  }
}

}  // namespace mlm::model::testing
