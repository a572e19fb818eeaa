#include "mlm/model/export_hf.h"

#include <filesystem>
#include <fstream>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace fs = std::filesystem;
namespace {

// The five special pieces of every mlm-train tokenizer (docs/ARCHITECTURE.md, "Formats").
constexpr const char* kPad = "[PAD]";
constexpr const char* kUnk = "[UNK]";
constexpr const char* kCls = "[CLS]";
constexpr const char* kSep = "[SEP]";
constexpr const char* kMask = "[MASK]";

void write_json(const fs::path& path, const nlohmann::json& json) {
  std::ofstream out(path, std::ios::trunc);
  out << json.dump(2) << "\n";
  out.close();
  if (!out) throw CheckpointError(path.string() + ": cannot write");
}

}  // namespace

nlohmann::json hf_config_json(const BertForPreTraining& model) {
  const auto& c = model->config();
  const bool nsp = model->has_nsp_head();
  nlohmann::json j;
  j["architectures"] = {nsp ? "BertForPreTraining" : "BertForMaskedLM"};
  j["model_type"] = "bert";
  j["vocab_size"] = model->vocab_size();
  j["hidden_size"] = c.hidden_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["intermediate_size"] = c.intermediate_size;
  // HF "gelu" is the exact erf form; "gelu_new" is the tanh approximation.
  j["hidden_act"] = c.hidden_act == config::Activation::gelu ? "gelu" : "gelu_new";
  j["hidden_dropout_prob"] = c.hidden_dropout_prob;
  j["attention_probs_dropout_prob"] = c.attention_probs_dropout_prob;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["type_vocab_size"] = c.type_vocab_size;
  j["initializer_range"] = c.initializer_range;
  j["layer_norm_eps"] = c.layer_norm_eps;
  j["pad_token_id"] = model->pad_id();
  j["position_embedding_type"] = "absolute";
  j["classifier_dropout"] = nullptr;
  j["use_cache"] = true;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  if (c.norm == config::NormPosition::pre) {
    // Not a BertConfig field: records why HF BERT cannot load this model faithfully.
    j["mlm_train_norm"] = "pre";
  }
  return j;
}

void export_hf(BertForPreTraining& model, const ExportTokenizer& tok, const std::string& output_dir) {
  if (tok.vocab_size != model->vocab_size())
    throw CheckpointError(tok.model_file + ": tokenizer has " + std::to_string(tok.vocab_size) +
                          " pieces but the model's vocabulary is " + std::to_string(model->vocab_size()));
  if (tok.ids.pad != model->pad_id())
    throw CheckpointError(tok.model_file + ": tokenizer [PAD] id " + std::to_string(tok.ids.pad) +
                          " differs from the model's pad id " + std::to_string(model->pad_id()));
  if (model->config().norm == config::NormPosition::pre)
    log::warn("export", "model.norm is pre: Hugging Face BERT is post-LN and cannot load "
              "bert.encoder.final_layer_norm; the export is for mlm-train (model.init_from) and "
              "custom code");
  const fs::path dir(output_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CheckpointError(output_dir + ": cannot create directory: " + ec.message());

  write_json(dir / "config.json", hf_config_json(model));
  write_tensor_file((dir / "pytorch_model.bin").string(), to_hf_state_dict(model));
  for (const char* name : {"tokenizer.model", "spiece.model"}) {
    fs::copy_file(tok.model_file, dir / name, fs::copy_options::overwrite_existing, ec);
    if (ec) throw CheckpointError(tok.model_file + ": cannot copy to " + (dir / name).string() + ": " + ec.message());
  }
  nlohmann::json special = {{"bos_token", kCls}, {"eos_token", kSep}, {"unk_token", kUnk}, {"sep_token", kSep},
                            {"pad_token", kPad}, {"cls_token", kCls}, {"mask_token", kMask}};
  write_json(dir / "special_tokens_map.json", special);
  nlohmann::json tokenizer_config = special;
  tokenizer_config["tokenizer_class"] = "AlbertTokenizer";  // sentencepiece + [CLS] A [SEP] B [SEP]
  tokenizer_config["do_lower_case"] = false;  // the sentencepiece model normalises by itself
  tokenizer_config["remove_space"] = true;
  tokenizer_config["keep_accents"] = true;
  tokenizer_config["model_max_length"] = model->config().max_position_embeddings;
  tokenizer_config["special_token_ids"] = {{"pad", tok.ids.pad}, {"unk", tok.ids.unk}, {"cls", tok.ids.cls},
                                           {"sep", tok.ids.sep}, {"mask", tok.ids.mask}};
  write_json(dir / "tokenizer_config.json", tokenizer_config);
  log::info("export", "wrote Hugging Face model to {}", output_dir);
}

}  // namespace mlm::model
