#include "special_roles.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "mlm/util/errors.h"

namespace mlm::text::hf {
namespace special_roles_detail {

struct Role {
  const char* key;
  std::optional<int32_t> HfSpecialTokens::*field;
};
constexpr Role kRoles[] = {
    {"cls_token", &HfSpecialTokens::cls}, {"sep_token", &HfSpecialTokens::sep},
    {"mask_token", &HfSpecialTokens::mask}, {"pad_token", &HfSpecialTokens::pad},
    {"unk_token", &HfSpecialTokens::unk}, {"bos_token", &HfSpecialTokens::bos},
    {"eos_token", &HfSpecialTokens::eos},
};

void read_roles_file(const std::string& text, const std::filesystem::path& path,
                     const std::function<std::optional<int32_t>(std::string_view)>& to_id, HfSpecialTokens& out) {
  if (text.empty()) return;  // the file is optional
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    throw DataError("tokenizer config '" + path.string() + "' is not valid JSON (expected an object)");
  }
  for (const auto& role : kRoles) {
    if (!json.contains(role.key) || json[role.key].is_null()) continue;
    const auto& v = json[role.key];
    std::string content;
    if (v.is_string()) {
      content = v.get<std::string>();
    } else if (v.is_object() && v.contains("content") && v["content"].is_string()) {
      content = v["content"].get<std::string>();
    } else {
      throw DataError("tokenizer config '" + path.string() + "': " + role.key +
                      ": expected a string or {\"content\": ...}, got " + v.dump());
    }
    const auto id = to_id(content);
    if (!id) {
      throw DataError("tokenizer config '" + path.string() + "': " + role.key + ": '" + content +
                      "' is not in the vocabulary");
    }
    out.*role.field = *id;
  }
}

}  // namespace special_roles_detail

HfSpecialTokens read_special_roles(const HfTokenizerFiles& files,
                                   const std::function<std::optional<int32_t>(std::string_view)>& to_id,
                                   const std::vector<Template::Item>* single, std::optional<int32_t> model_unk) {
  HfSpecialTokens roles;
  const std::filesystem::path dir(files.dir);
  special_roles_detail::read_roles_file(files.tokenizer_config_json, dir / "tokenizer_config.json", to_id, roles);
  special_roles_detail::read_roles_file(files.special_tokens_map_json, dir / "special_tokens_map.json", to_id, roles);
  if (single) {
    const Template::Item* first = nullptr;
    const Template::Item* last = nullptr;
    for (const auto& item : *single) {
      if (item.sequence >= 0 || item.ids.size() != 1) continue;
      if (!first) first = &item;
      last = &item;
    }
    // "[CLS] $A [SEP]": cls before the sequence, sep after it.
    if (!roles.cls && first && !single->empty() && &single->front() == first) roles.cls = first->ids[0];
    if (!roles.sep && last && &single->back() == last) roles.sep = last->ids[0];
  }
  if (!roles.unk) roles.unk = model_unk;
  return roles;
}

}  // namespace mlm::text::hf
