// The HfTokenizer facade: reads tokenizer.json into a Pipeline and runs it as
// tokenizers' Tokenizer::encode does (tokenizers/src/tokenizer/mod.rs, added_vocabulary.rs).
#include "mlm/text/hf/hf_tokenizer.h"

#include <filesystem>

#include "added_tokens.h"
#include "components.h"
#include "decoders.h"
#include "mlm/util/errors.h"
#include "mlm/util/read_file.h"
#include "special_roles.h"
#include "vocabulary.h"

namespace mlm::text::hf {

struct Pipeline {
  std::string origin;
  std::string model_type;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::optional<Template> post;
  std::unique_ptr<Decoder> decoder;
  AddedTokenMatcher raw_tokens, normalized_tokens;
  std::vector<std::string> pieces;  // the model's, then added tokens beyond them
  std::unordered_map<std::string, int32_t> added_ids;
  std::vector<uint8_t> special;  // [vocab_size]
  std::vector<uint8_t> added;    // [vocab_size]: an added token
  HfSpecialTokens roles;
  HfTokenizerFiles files;
};

namespace hf_tokenizer_detail {

void read_added_tokens(const JsonReader& root, Pipeline& p) {
  std::vector<AddedTokenSpec> raw, normalized;
  std::vector<std::string> raw_patterns, normalized_patterns;
  if (!root.has("added_tokens")) return;
  const auto entries = root.array("added_tokens");
  // The tables below grow to the largest id: bound it before they do.
  const int64_t largest = largest_id_for(p.pieces.size() + entries.size());
  for (const auto& entry : entries) {
    AddedTokenSpec t;
    t.content = entry.string("content");
    const int64_t id = entry.integer("id");
    if (id < 0) entry.fail(std::to_string(id) + " is not a valid id", "id");
    if (id > largest) {
      entry.fail(std::to_string(id) + " is far beyond the vocabulary (" + std::to_string(p.pieces.size()) +
                     " pieces and " + std::to_string(entries.size()) + " added tokens; ids up to " +
                     std::to_string(largest) + " are accepted)",
                 "id");
    }
    t.id = static_cast<int32_t>(id);
    t.special = entry.boolean_or("special", false);
    t.single_word = entry.boolean_or("single_word", false);
    t.lstrip = entry.boolean_or("lstrip", false);
    t.rstrip = entry.boolean_or("rstrip", false);
    t.normalized = entry.boolean_or("normalized", !t.special);
    p.added_ids[t.content] = t.id;
    if (p.pieces.size() <= size_t(t.id)) p.pieces.resize(size_t(t.id) + 1);
    p.pieces[t.id] = t.content;
    if (p.special.size() <= size_t(t.id)) p.special.resize(size_t(t.id) + 1);
    p.special[t.id] = t.special;
    if (p.added.size() <= size_t(t.id)) p.added.resize(size_t(t.id) + 1);
    p.added[t.id] = 1;
    if (t.normalized) {
      std::string pattern = t.content;
      if (p.normalizer) p.normalizer->normalize(pattern);
      p.pieces[t.id] = pattern;  // the library's id_to_token (and decode) give the normalized form
      normalized_patterns.push_back(std::move(pattern));
      normalized.push_back(std::move(t));
    } else {
      raw_patterns.push_back(t.content);
      raw.push_back(std::move(t));
    }
  }
  p.raw_tokens = AddedTokenMatcher(std::move(raw), std::move(raw_patterns));
  p.normalized_tokens = AddedTokenMatcher(std::move(normalized), std::move(normalized_patterns));
}

std::shared_ptr<Pipeline> read_pipeline(std::string_view text, const std::string& origin) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    throw DataError("tokenizer '" + origin + "' is not valid JSON (expected an object)");
  }
  auto p = std::make_shared<Pipeline>();
  p->origin = origin;
  const JsonReader root(json, "", p->origin);
  if (root.has("normalizer")) p->normalizer = make_normalizer(root.at("normalizer"));
  if (root.has("pre_tokenizer")) p->pre_tokenizer = make_pre_tokenizer(root.at("pre_tokenizer"));
  const JsonReader model = root.at("model");
  p->model_type = model.has("type") ? model.type() : std::string();
  p->model = make_model(model);
  p->pieces = p->model->pieces();
  p->special.assign(p->pieces.size(), 0);
  read_added_tokens(root, *p);
  p->special.resize(p->pieces.size());
  p->added.resize(p->pieces.size());
  // After the added tokens: the template's ids must be among them or the model's.
  if (root.has("post_processor")) p->post = make_template(root.at("post_processor"), p->pieces.size());
  if (root.has("decoder")) p->decoder = make_decoder(root.at("decoder"));
  return p;
}

}  // namespace hf_tokenizer_detail

HfTokenizerFiles HfTokenizerFiles::read(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path file(path);
  if (fs::is_directory(file)) file /= "tokenizer.json";
  auto bytes = read_file(file);
  if (!bytes) throw DataError("tokenizer '" + file.string() + "' cannot be read");
  HfTokenizerFiles files;
  files.tokenizer_json = std::move(*bytes);
  files.dir = file.parent_path().string();
  const fs::path dir(files.dir);
  files.tokenizer_config_json = read_file(dir / "tokenizer_config.json").value_or("");
  files.special_tokens_map_json = read_file(dir / "special_tokens_map.json").value_or("");
  return files;
}

HfTokenizer HfTokenizer::load(const std::string& path) {
  auto files = HfTokenizerFiles::read(path);
  const auto origin =
      std::filesystem::is_directory(path) ? (std::filesystem::path(path) / "tokenizer.json").string() : path;
  return from_files(std::move(files), origin);
}

HfTokenizer HfTokenizer::from_json(std::string_view json, const std::string& origin, const std::string& config_dir) {
  HfTokenizerFiles files;
  files.tokenizer_json = std::string(json);
  if (!config_dir.empty()) {
    const std::filesystem::path dir(config_dir);
    files.tokenizer_config_json = read_file(dir / "tokenizer_config.json").value_or("");
    files.special_tokens_map_json = read_file(dir / "special_tokens_map.json").value_or("");
    files.dir = config_dir;
  }
  return from_files(std::move(files), origin);
}

HfTokenizer HfTokenizer::from_files(HfTokenizerFiles files, const std::string& origin) {
  auto pipeline = hf_tokenizer_detail::read_pipeline(files.tokenizer_json, origin);
  HfTokenizer tokenizer(pipeline);
  pipeline->roles = read_special_roles(
      files, [&](std::string_view piece) { return tokenizer.piece_to_id(piece); },
      pipeline->post ? &pipeline->post->single : nullptr, pipeline->model->unk_id());
  pipeline->files = std::move(files);
  return tokenizer;
}

std::map<std::string, std::vector<std::string>> HfTokenizer::component_types() {
  return {{"normalizers", normalizer_types()},
          {"pre_tokenizers", pre_tokenizer_types()},
          {"models", model_types()},
          {"processors", processor_types()},
          {"decoders", decoder_types()}};
}

void HfTokenizer::encode(std::string_view text, std::vector<int32_t>& ids, std::vector<uint8_t>* starts_word) const {
  const Pipeline& p = *pipeline_;
  ids.clear();
  if (starts_word) starts_word->clear();
  thread_local std::vector<Segment> raw, normalized;
  thread_local std::string segment;
  thread_local Pieces pieces;
  auto mark = [&](size_t before) {
    if (!starts_word) return;
    starts_word->resize(ids.size(), 0);
    if (ids.size() > before) (*starts_word)[before] = 1;
  };
  if (p.raw_tokens.empty()) {
    raw.assign(1, Segment{0, static_cast<uint32_t>(text.size()), -1});
  } else {
    p.raw_tokens.split(text, raw);
  }
  for (const auto& r : raw) {
    if (r.id >= 0) {
      ids.push_back(r.id);
      mark(ids.size() - 1);
      continue;
    }
    segment.assign(text.substr(r.begin, r.end - r.begin));
    if (p.normalizer) p.normalizer->normalize(segment);
    if (p.normalized_tokens.empty()) {
      normalized.assign(1, Segment{0, static_cast<uint32_t>(segment.size()), -1});
    } else {
      p.normalized_tokens.split(segment, normalized);
    }
    for (const auto& n : normalized) {
      if (n.id >= 0) {
        ids.push_back(n.id);
        mark(ids.size() - 1);
        continue;
      }
      const std::string_view part = std::string_view(segment).substr(n.begin, n.end - n.begin);
      if (part.empty()) continue;
      const bool at_text_start = r.begin == 0 && n.begin == 0;
      pieces.clear();
      if (p.pre_tokenizer) {
        p.pre_tokenizer->split(part, at_text_start, pieces);
      } else {
        pieces.add(part, at_text_start);
      }
      for (const auto& piece : pieces.pieces) {
        const size_t before = ids.size();
        p.model->tokenize(pieces.view(piece), ids);
        mark(before);
      }
    }
  }
}

std::vector<int32_t> HfTokenizer::apply_template(const std::vector<int32_t>& a, const std::vector<int32_t>* b,
                                                 bool add_special_tokens, std::vector<int32_t>* type_ids) const {
  std::vector<int32_t> out;
  if (type_ids) type_ids->clear();
  auto append = [&](const std::vector<int32_t>& ids, int32_t type) {
    out.insert(out.end(), ids.begin(), ids.end());
    if (type_ids) type_ids->insert(type_ids->end(), ids.size(), type);
  };
  const auto& post = pipeline_->post;
  if (!add_special_tokens || !post) {
    append(a, 0);
    if (b) append(*b, 1);
    return out;
  }
  for (const auto& item : b ? post->pair : post->single) {
    if (item.sequence < 0) {
      append(item.ids, item.type_id);
    } else if (item.sequence == 0) {
      append(a, item.type_id);
    } else if (b) {
      append(*b, item.type_id);
    }
  }
  return out;
}

std::vector<int32_t> HfTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  encode(text, ids);
  return apply_template(ids, nullptr, add_special_tokens, nullptr);
}

std::vector<int32_t> HfTokenizer::encode_pair(std::string_view a, std::string_view b, bool add_special_tokens,
                                              std::vector<int32_t>* type_ids) const {
  std::vector<int32_t> ids_a, ids_b;
  encode(a, ids_a);
  encode(b, ids_b);
  return apply_template(ids_a, &ids_b, add_special_tokens, type_ids);
}

std::string HfTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  for (int32_t id : ids) {
    const std::string& piece = id_to_piece(id);
    if (skip_special_tokens && is_special(id)) continue;
    tokens.push_back(piece);
  }
  std::string out;
  if (!pipeline_->decoder) {
    for (size_t k = 0; k < tokens.size(); ++k) out += (k ? " " : "") + tokens[k];
    return out;
  }
  pipeline_->decoder->decode_chain(tokens);
  for (const auto& t : tokens) out += t;
  return out;
}

int64_t HfTokenizer::vocab_size() const { return static_cast<int64_t>(pipeline_->pieces.size()); }

const std::string& HfTokenizer::id_to_piece(int32_t id) const {
  if (id < 0 || size_t(id) >= pipeline_->pieces.size()) {
    throw DataError("tokenizer '" + pipeline_->origin + "': id " + std::to_string(id) + " is out of range [0, " +
                    std::to_string(pipeline_->pieces.size()) + ")");
  }
  return pipeline_->pieces[id];
}

std::optional<int32_t> HfTokenizer::piece_to_id(std::string_view piece) const {
  const auto it = pipeline_->added_ids.find(std::string(piece));
  if (it != pipeline_->added_ids.end()) return it->second;
  return pipeline_->model->piece_to_id(piece);
}

const HfSpecialTokens& HfTokenizer::special_tokens() const { return pipeline_->roles; }

bool HfTokenizer::is_special(int32_t id) const {
  return id >= 0 && size_t(id) < pipeline_->special.size() && pipeline_->special[id];
}

const std::string& HfTokenizer::model_type() const { return pipeline_->model_type; }

const HfTokenizerFiles& HfTokenizer::files() const { return pipeline_->files; }

std::vector<uint8_t> HfTokenizer::word_start_pieces() const {
  const Pipeline& p = *pipeline_;
  std::vector<uint8_t> starts(p.pieces.size(), 1);
  for (size_t id = 0; id < p.pieces.size(); ++id) {
    if (p.added[id]) continue;  // matched whole, before any pre-tokenizer: a word of its own
    std::optional<bool> s = p.model->piece_starts_word(p.pieces[id]);
    if (!s && p.pre_tokenizer) s = p.pre_tokenizer->piece_starts_word(p.pieces[id]);
    starts[id] = s.value_or(true);
  }
  return starts;
}

}  // namespace mlm::text::hf
