#include "mlm/model/hf/export_hf.h"

#include <filesystem>

#include "config_json.h"
#include "mlm/model/electra/electra_hf.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/util/atomic_file.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace fs = std::filesystem;

namespace {

// RobertaConfig / XLMRobertaConfig: BertConfig's fields under another model_type. The bos and
// eos ids are null, as for ModernBERT: the tokenizer files carry the special tokens, and
// RobertaConfig's defaults (0 and 2, fairseq's) would name pieces of another vocabulary.
nlohmann::json roberta_config_json(const MaskedLmImpl& model) {
  const bool xlm = model.config().architecture == config::Architecture::xlm_roberta;
  nlohmann::json j;
  j["architectures"] = {xlm ? "XLMRobertaForMaskedLM" : "RobertaForMaskedLM"};
  j["model_type"] = xlm ? "xlm-roberta" : "roberta";
  put_common_fields(model, j);
  put_bert_layer_fields(model, j);
  j["bos_token_id"] = j["eos_token_id"] = nullptr;
  j["classifier_dropout"] = nullptr;
  j["use_cache"] = true;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  return j;
}

nlohmann::json bert_config_json(const MaskedLmImpl& model) {
  const auto& c = model.config();
  const bool nsp = model.has_nsp_head();
  nlohmann::json j;
  j["architectures"] = {nsp ? "BertForPreTraining" : "BertForMaskedLM"};
  j["model_type"] = "bert";
  put_common_fields(model, j);
  put_bert_layer_fields(model, j);
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

}  // namespace

nlohmann::json hf_config_json(MaskedLm model) {
  switch (model->config().architecture) {
    case config::Architecture::modernbert: return modernbert_config_json(*model);
    case config::Architecture::electra: return electra_config_json(*model, "ElectraForMaskedLM");
    case config::Architecture::roberta:
    case config::Architecture::xlm_roberta: return roberta_config_json(*model);
    case config::Architecture::bert: break;
  }
  return bert_config_json(*model);
}

void write_hf_files(const std::string& output_dir, const nlohmann::json& config_json, const TensorDict& weights,
                    WeightFormat format) {
  const fs::path dir(output_dir);
  write_file_atomically(dir / "config.json", config_json.dump(2) + "\n");
  if (format == WeightFormat::safetensors)
    write_safetensors((dir / "model.safetensors").string(), weights);
  else
    write_tensor_file((dir / "pytorch_model.bin").string(), weights);
}

std::vector<std::string> write_hf_model(MaskedLm model, const std::string& output_dir, WeightFormat format) {
  if (auto* pair = dynamic_cast<ElectraForPreTrainingImpl*>(model.get())) {
    write_electra_pair(*pair, output_dir, format);
    return {(fs::path(output_dir) / "generator").string(), (fs::path(output_dir) / "discriminator").string()};
  }
  const auto& c = model->config();
  if (c.architecture == config::Architecture::bert && c.norm == config::NormPosition::pre)
    log::warn("export", "model.norm is pre: Hugging Face BERT is post-LN and cannot load "
              "bert.encoder.final_layer_norm; the export is for mlm-train (model.init_from) and "
              "custom code");
  write_hf_files(output_dir, hf_config_json(model), model->hf_state_dict(), format);
  return {output_dir};
}

}  // namespace mlm::model
