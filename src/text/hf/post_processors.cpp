// The post-processors of tokenizers as templates of special ids around the sequences
// (tokenizers/src/processors/): what encode adds with add_special_tokens.
#include "components.h"

namespace mlm::text::hf {
namespace post_processors_detail {

// An id the template adds: one of the vocabulary's, else every per-id table (special roles,
// special flags) would be indexed past its end.
int32_t vocabulary_id(const JsonReader& where, const nlohmann::json& id, size_t vocab_size) {
  const bool in_range = id.is_number_unsigned() ? id.get<uint64_t>() < vocab_size
                                                : id.get<int64_t>() >= 0 && size_t(id.get<int64_t>()) < vocab_size;
  if (!in_range) {
    where.fail("id " + id.dump() + " is not in the vocabulary (" + std::to_string(vocab_size) + " ids)");
  }
  return static_cast<int32_t>(id.get<int64_t>());
}

// ["[SEP]", 102]
int32_t special_id(const JsonReader& json, const char* name, size_t vocab_size) {
  const JsonReader pair = json.at(name);
  const auto& v = pair.json();
  if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number_integer()) {
    pair.fail("expected [token, id], got " + v.dump());
  }
  return vocabulary_id(pair, v[1], vocab_size);
}

Template::Item special(int32_t id, int32_t type_id) { return {-1, {id}, type_id}; }
Template::Item sequence(int which, int32_t type_id) { return {which, {}, type_id}; }

std::vector<Template::Item> template_items(const JsonReader& json, const char* name,
                                           const nlohmann::json& specials, const JsonReader& where,
                                           size_t vocab_size) {
  std::vector<Template::Item> items;
  for (const auto& piece : json.array(name)) {
    if (piece.has("Sequence")) {
      const JsonReader s = piece.at("Sequence");
      const auto id = s.string("id");
      if (id != "A" && id != "B") s.fail("'" + id + "' is not A or B", "id");
      items.push_back(sequence(id == "A" ? 0 : 1, static_cast<int32_t>(s.integer("type_id"))));
    } else if (piece.has("SpecialToken")) {
      const JsonReader s = piece.at("SpecialToken");
      const auto id = s.string("id");
      if (!specials.is_object() || !specials.contains(id)) {
        where.fail("'" + id + "' is used in the template but not listed", "special_tokens");
      }
      const JsonReader entry(specials[id], where.key() + ".special_tokens." + id, where.origin());
      Template::Item item{-1, {}, static_cast<int32_t>(s.integer("type_id"))};
      for (const auto& one : entry.array("ids")) {
        if (!one.json().is_number_integer()) one.fail("expected an id, got " + one.json().dump());
        item.ids.push_back(vocabulary_id(one, one.json(), vocab_size));
      }
      items.push_back(std::move(item));
    } else {
      piece.fail("expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  }
  return items;
}

}  // namespace post_processors_detail

namespace post_processors_detail {

std::optional<Template> make_bert(const JsonReader& json, size_t vocab_size) {
  const int32_t cls = special_id(json, "cls", vocab_size), sep = special_id(json, "sep", vocab_size);
  return Template{{special(cls, 0), sequence(0, 0), special(sep, 0)},
                  {special(cls, 0), sequence(0, 0), special(sep, 0), sequence(1, 1), special(sep, 1)}};
}

std::optional<Template> make_roberta(const JsonReader& json, size_t vocab_size) {
  const int32_t cls = special_id(json, "cls", vocab_size), sep = special_id(json, "sep", vocab_size);
  // RoBERTa has no token types: the second sequence is type 0 too.
  return Template{{special(cls, 0), sequence(0, 0), special(sep, 0)},
                  {special(cls, 0), sequence(0, 0), special(sep, 0), special(sep, 0), sequence(1, 0),
                   special(sep, 0)}};
}

std::optional<Template> make_template_processing(const JsonReader& json, size_t vocab_size) {
  const auto& specials = json.has("special_tokens") ? json.at("special_tokens").json() : nlohmann::json::object();
  return Template{template_items(json, "single", specials, json, vocab_size),
                  template_items(json, "pair", specials, json, vocab_size)};
}

std::optional<Template> make_sequence(const JsonReader& json, size_t vocab_size) {
  std::optional<Template> out;
  for (const auto& step : json.array("processors")) {
    auto t = make_template(step, vocab_size);
    if (t && out) step.fail("a second processor that adds special tokens is not supported");
    if (t) out = std::move(t);
  }
  return out;
}

using Entry = Registered<std::optional<Template>, size_t>;

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"BertProcessing", make_bert},
      {"RobertaProcessing", make_roberta},
      {"TemplateProcessing", make_template_processing},
      {"ByteLevel", [](const JsonReader&, size_t) -> std::optional<Template> { return std::nullopt; }},  // offsets only
      {"Sequence", make_sequence},
  };
  return entries;
}

}  // namespace post_processors_detail

std::optional<Template> make_template(const JsonReader& json, size_t vocab_size) {
  return registered(post_processors_detail::table(), json, "post-processor").make(json, vocab_size);
}

std::vector<std::string> processor_types() { return type_names(post_processors_detail::table()); }

}  // namespace mlm::text::hf
