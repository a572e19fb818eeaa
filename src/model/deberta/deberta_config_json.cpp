// DebertaV2Config both ways. transformers reads pos_att_type as a list or as "p2c|c2p", and
// norm_rel_ebd as "|"-separated names; both forms are read, the list written.
#include "mlm/model/deberta/deberta_config_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "mlm/model/hf/config_fields.h"

namespace mlm::model {
namespace {

std::vector<std::string> split_bars(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, '|');) {
    const auto first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
    if (first == std::string::npos) continue;
    item = item.substr(first, last - first + 1);
    for (auto& ch : item) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out.push_back(item);
  }
  return out;
}

[[noreturn]] void refuse_deberta_field(const std::string& path, const std::string& key, const std::string& value,
                         const std::string& why) {
  throw CheckpointError(path + ": " + key + " " + value + " " + why);
}

}  // namespace

config::ModelConfig deberta_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig c) {
  c.architecture = config::Architecture::deberta_v2;
  c.objective = config::Objective::mlm;
  c.norm = config::NormPosition::post;
  take_common_fields(json, path, c);
  take(json, "hidden_dropout_prob", c.hidden_dropout_prob, path);
  take(json, "attention_probs_dropout_prob", c.attention_probs_dropout_prob, path);
  take(json, "layer_norm_eps", c.layer_norm_eps, path);
  take_activation(json, "hidden_act", c.hidden_act, path);
  // DebertaV2Config's defaults where the file is silent (transformers reads them so).
  c.type_vocab_size = 0;
  c.relative_attention = false;
  c.position_buckets = -1;
  c.max_relative_positions = -1;
  c.pos_att_type.clear();
  c.share_att_key = false;
  c.norm_rel_ebd = "none";
  c.position_biased_input = true;
  c.embedding_size = 0;
  take(json, "type_vocab_size", c.type_vocab_size, path);
  take(json, "relative_attention", c.relative_attention, path);
  take(json, "position_buckets", c.position_buckets, path);
  take(json, "max_relative_positions", c.max_relative_positions, path);
  take(json, "share_att_key", c.share_att_key, path);
  take(json, "position_biased_input", c.position_biased_input, path);
  take(json, "embedding_size", c.embedding_size, path);
  if (c.embedding_size == c.hidden_size) c.embedding_size = 0;
  if (json.contains("pos_att_type") && !json["pos_att_type"].is_null()) {
    const auto& terms = json["pos_att_type"];
    if (terms.is_string()) {
      c.pos_att_type = split_bars(terms.get<std::string>());
    } else if (terms.is_array() && std::all_of(terms.begin(), terms.end(), [](const auto& t) { return t.is_string(); })) {
      for (const auto& t : terms) c.pos_att_type.push_back(t.get<std::string>());
    } else {
      refuse_deberta_field(path, "pos_att_type", terms.dump(), "is neither a list of names nor a \"p2c|c2p\" string");
    }
    for (const auto& term : c.pos_att_type)
      if (term != "c2p" && term != "p2c")
        refuse_deberta_field(path, "pos_att_type", terms.dump(), "lists " + term + "; mlm-train computes c2p and p2c");
  }
  std::string norm_rel_ebd;
  take(json, "norm_rel_ebd", norm_rel_ebd, path);
  for (const auto& name : split_bars(norm_rel_ebd)) {
    if (name == "layer_norm") c.norm_rel_ebd = "layer_norm";
    else if (name != "none") refuse_deberta_field(path, "norm_rel_ebd", norm_rel_ebd, "names " + name + "; mlm-train computes layer_norm");
  }
  int64_t conv_kernel_size = 0;
  take(json, "conv_kernel_size", conv_kernel_size, path);
  if (conv_kernel_size > 0)
    refuse_deberta_field(path, "conv_kernel_size", std::to_string(conv_kernel_size),
           "asks for DeBERTa-v2's convolution layer, which mlm-train does not compute");
  c.conv_kernel_size = 0;
  if (json.contains("attention_head_size") && !json["attention_head_size"].is_null()) {
    int64_t head = 0;
    take(json, "attention_head_size", head, path);
    if (c.num_attention_heads < 1 || head * c.num_attention_heads != c.hidden_size)
      refuse_deberta_field(path, "attention_head_size", std::to_string(head),
             "differs from hidden_size / num_attention_heads, the only head width mlm-train computes");
  }
  // legacy false: the head as lm_predictions.lm_head.* (deberta_head_layouts.h), dense H -> H
  // multiplied by the E-wide word embeddings, which only computes when E is H.
  bool legacy = true;
  take(json, "legacy", legacy, path);
  if (!legacy && c.embedding_size != 0)
    refuse_deberta_field(path, "legacy", "false",
           "with embedding_size " + std::to_string(c.embedding_size) + " apart from hidden_size " +
               std::to_string(c.hidden_size) + ": the lm_predictions head is H wide and cannot decode E-wide embeddings");
  config::Activation pooler = c.hidden_act;
  take_activation(json, "pooler_hidden_act", pooler, path);
  if (pooler != c.hidden_act)
    refuse_deberta_field(path, "pooler_hidden_act", json["pooler_hidden_act"].dump(), "differs from hidden_act, which mlm-train's pooler uses");
  int64_t pooler_size = c.hidden_size;
  take(json, "pooler_hidden_size", pooler_size, path);
  if (pooler_size != c.hidden_size)
    refuse_deberta_field(path, "pooler_hidden_size", std::to_string(pooler_size), "differs from hidden_size");
  require_tied_embeddings(json, path);
  return c;
}

std::string deberta_option_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs) {
  std::string out;
  const auto differ = [&](const char* key, const std::string& their_value, const std::string& our_value) {
    if (their_value != our_value)
      out += fmt::format("{}{} {} (set model.{}: {})", out.empty() ? "" : ", ", key, their_value, key, our_value);
  };
  const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  differ("relative_attention", flag(theirs.relative_attention), flag(ours.relative_attention));
  differ("position_buckets", std::to_string(theirs.position_buckets), std::to_string(ours.position_buckets));
  differ("max_relative_positions", std::to_string(config::max_relative_positions(theirs)),
         std::to_string(config::max_relative_positions(ours)));
  // The terms are a set: "c2p|p2c" computes what "p2c|c2p" does.
  const auto terms = [](std::vector<std::string> t) {
    std::sort(t.begin(), t.end());
    return fmt::format("[{}]", fmt::join(t, ", "));
  };
  differ("pos_att_type", terms(theirs.pos_att_type), terms(ours.pos_att_type));
  differ("share_att_key", flag(theirs.share_att_key), flag(ours.share_att_key));
  differ("norm_rel_ebd", theirs.norm_rel_ebd, ours.norm_rel_ebd);
  differ("position_biased_input", flag(theirs.position_biased_input), flag(ours.position_biased_input));
  return out;
}

nlohmann::json deberta_config_json(const MaskedLmImpl& model) {
  const auto& c = model.config();
  nlohmann::json j;
  j["architectures"] = {"DebertaV2ForMaskedLM"};
  j["model_type"] = "deberta-v2";
  put_common_fields(model, j);
  const char* act = c.hidden_act == config::Activation::gelu ? "gelu" : "gelu_new";
  j["hidden_act"] = act;
  j["hidden_dropout_prob"] = c.hidden_dropout_prob;
  j["attention_probs_dropout_prob"] = c.attention_probs_dropout_prob;
  j["type_vocab_size"] = c.type_vocab_size;
  j["layer_norm_eps"] = c.layer_norm_eps;
  j["pad_token_id"] = model.pad_id();
  j["relative_attention"] = c.relative_attention;
  j["position_buckets"] = c.position_buckets;
  j["max_relative_positions"] = c.max_relative_positions;
  j["pos_att_type"] = c.pos_att_type;
  j["share_att_key"] = c.share_att_key;
  j["norm_rel_ebd"] = c.norm_rel_ebd;
  j["position_biased_input"] = c.position_biased_input;
  j["embedding_size"] = config::electra_embedding_size(c);
  j["pooler_hidden_size"] = c.hidden_size;
  j["pooler_hidden_act"] = act;
  j["pooler_dropout"] = 0.0;
  j["legacy"] = true;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  return j;
}

}  // namespace mlm::model
