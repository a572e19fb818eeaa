#include "mlm/text/tokenizer_trainers/tokenizer_json_writer.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <unordered_map>

#include "mlm/util/errors.h"

namespace mlm::text::tokenizer_trainers {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json added_token(int64_t id, const std::string& content, bool lstrip) {
  return {{"id", id},         {"content", content}, {"single_word", false}, {"lstrip", lstrip},
          {"rstrip", false},  {"normalized", false}, {"special", true}};
}

ordered_json template_piece(const char* kind, const std::string& id, int type_id) {
  return {{kind, {{"id", id}, {"type_id", type_id}}}};
}

ordered_json post_processor(const SpecialTokens& specials, const std::function<int64_t(const std::string&)>& id_of) {
  if (specials.style == config::SpecialTokenStyle::roberta) {
    return {{"type", "RobertaProcessing"},
            {"sep", {specials.sep, id_of(specials.sep)}},
            {"cls", {specials.cls, id_of(specials.cls)}},
            {"trim_offsets", true},
            {"add_prefix_space", false}};
  }
  const int b_type = specials.style == config::SpecialTokenStyle::bert ? 1 : 0;
  ordered_json single = ordered_json::array({template_piece("SpecialToken", specials.cls, 0),
                                             template_piece("Sequence", "A", 0),
                                             template_piece("SpecialToken", specials.sep, 0)});
  ordered_json pair = single;
  pair.push_back(template_piece("Sequence", "B", b_type));
  pair.push_back(template_piece("SpecialToken", specials.sep, b_type));
  ordered_json tokens = ordered_json::object();
  for (const auto& t : {specials.cls, specials.sep}) {
    tokens[t] = {{"id", t}, {"ids", {id_of(t)}}, {"tokens", {t}}};
  }
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", tokens}};
}

ordered_json model_json(const BpeModel& model, const PipelineOptions& pipeline, const SpecialTokens& specials) {
  ordered_json vocab = ordered_json::object();
  for (size_t id = 0; id < model.vocab.size(); ++id) vocab[model.vocab[id]] = id;
  if (pipeline.kind == TrainedKind::wordpiece) {
    return {{"type", "WordPiece"}, {"unk_token", specials.unk}, {"continuing_subword_prefix", "##"},
            {"max_input_chars_per_word", 100}, {"vocab", vocab}};
  }
  ordered_json merges = ordered_json::array();
  for (const auto& [a, b] : model.merges) merges.push_back({a, b});
  return {{"type", "BPE"},          {"dropout", nullptr},     {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},                {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},      {"byte_fallback", false}, {"ignore_merges", false},
          {"vocab", vocab},         {"merges", merges}};
}

// The roles as tokenizer_config.json and special_tokens_map.json name them.
ordered_json roles(const SpecialTokens& specials) {
  ordered_json out = ordered_json::object();
  const std::pair<const char*, const std::string*> named[] = {
      {"bos_token", &specials.bos}, {"eos_token", &specials.eos}, {"unk_token", &specials.unk},
      {"sep_token", &specials.sep}, {"pad_token", &specials.pad}, {"cls_token", &specials.cls},
      {"mask_token", &specials.mask}};
  for (const auto& [key, token] : named) {
    if (!token->empty()) out[key] = *token;
  }
  return out;
}

}  // namespace

TokenizerFiles tokenizer_files(const BpeModel& model, const PipelineOptions& pipeline, const SpecialTokens& specials) {
  std::unordered_map<std::string, int64_t> ids;
  for (size_t id = 0; id < model.vocab.size(); ++id) ids.emplace(model.vocab[id], static_cast<int64_t>(id));
  ordered_json added = ordered_json::array();
  for (const auto& t : specials.leading) added.push_back(added_token(ids.at(t), t, t == specials.lstrip));
  int64_t next = static_cast<int64_t>(model.vocab.size());
  for (const auto& t : specials.trailing) {
    ids.emplace(t, next);
    added.push_back(added_token(next++, t, t == specials.lstrip));
  }
  const auto id_of = [&ids](const std::string& t) { return ids.at(t); };

  ordered_json tokenizer = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}};
  tokenizer["added_tokens"] = added;
  tokenizer["normalizer"] = normalizer_json(pipeline);
  tokenizer["pre_tokenizer"] = pre_tokenizer_json(pipeline);
  tokenizer["post_processor"] = post_processor(specials, id_of);
  tokenizer["decoder"] = decoder_json(pipeline);
  tokenizer["model"] = model_json(model, pipeline, specials);

  ordered_json config = roles(specials);
  ordered_json decoder = ordered_json::object();
  for (const auto& entry : added) {
    decoder[std::to_string(entry["id"].get<int64_t>())] = {
        {"content", entry["content"]}, {"lstrip", entry["lstrip"]}, {"normalized", false},
        {"rstrip", false},             {"single_word", false},      {"special", true}};
  }
  config["added_tokens_decoder"] = decoder;
  config["clean_up_tokenization_spaces"] = false;
  config["tokenizer_class"] = "PreTrainedTokenizerFast";
  if (pipeline.kind == TrainedKind::wordpiece) config["do_lower_case"] = pipeline.lowercase;

  ordered_json map = roles(specials);
  if (!specials.lstrip.empty()) {
    const char* key = specials.lstrip == specials.mask ? "mask_token" : nullptr;
    if (key) map[key] = {{"content", specials.lstrip}, {"lstrip", true}, {"normalized", false},
                         {"rstrip", false}, {"single_word", false}};
  }
  return {tokenizer.dump(2) + "\n", config.dump(2) + "\n", map.dump(2) + "\n"};
}

void write_tokenizer_files(const std::filesystem::path& dir, const TokenizerFiles& files) {
  std::filesystem::create_directories(dir);
  const std::pair<const char*, const std::string*> named[] = {{"tokenizer.json", &files.tokenizer_json},
                                                               {"tokenizer_config.json", &files.tokenizer_config_json},
                                                               {"special_tokens_map.json", &files.special_tokens_map_json}};
  for (const auto& [name, text] : named) {
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(text->data(), static_cast<std::streamsize>(text->size()));
    if (!out) throw DataError("cannot write tokenizer file '" + (dir / name).string() + "'");
  }
}

}  // namespace mlm::text::tokenizer_trainers
