// tokenizer.json from a sentencepiece model. How each part reproduces sentencepiece (0.1.x,
// normalizer.cc and {unigram,bpe}_model.cc) in the `tokenizers` pipeline, which runs: split
// out added tokens -> normalizer (per remaining segment) -> pre-tokenizer -> model -> post-processor.
#include "mlm/text/sentencepiece/sentencepiece_json.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "mlm/text/sentencepiece/sentencepiece_model.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/base64.h"
#include "mlm/util/errors.h"
#include "mlm/util/utf8_decode.h"

namespace mlm::text {
namespace {

using json = nlohmann::json;
using Type = SentencePieceModel::PieceType;

constexpr const char* kSpaceMarker = "\xE2\x96\x81";  // U+2581, sentencepiece's escaped space
// The longest literal text a byte piece matches: "<0xAB>".
constexpr int kBytePieceChars = 6;


json unigram_model(const SentencePieceModel& model) {
  // sentencepiece's Viterbi never matches byte, control, unknown or unused pieces against the
  // text; tokenizers' Unigram matches every piece, so a literal "<0x41>" would become the byte
  // piece (score 0, above any real path). A score below any path of at most kBytePieceChars
  // normal pieces keeps Viterbi off them (the special pieces are added tokens anyway). It also
  // lowers tokenizers' unknown score (its min score - 10), which shifts every segmentation
  // through an unknown character by the same amount: no other piece can take that character.
  float min_normal = 0.0f;
  for (const auto& p : model.pieces) {
    if (p.type == Type::normal) min_normal = std::min(min_normal, p.score);
  }
  const double unmatched_score = kBytePieceChars * static_cast<double>(min_normal) - 1.0;
  json vocab = json::array();
  for (const auto& p : model.pieces) {
    const bool matched = p.type == Type::normal || p.type == Type::user_defined;
    vocab.push_back({p.text, matched ? static_cast<double>(p.score) : unmatched_score});
  }
  return {{"type", "Unigram"},
          {"unk_id", model.unk_id},
          {"vocab", std::move(vocab)},
          {"byte_fallback", model.byte_fallback}};
}

// sentencepiece BPE merges, at each step, the adjacent pair whose concatenation is the piece
// of highest score (leftmost on ties). tokenizers merges the pair of lowest rank: ranking
// every split of a piece into two pieces by the merged piece's score gives the same order,
// but for two different splits of one piece overlapping in a word ("ab"+"a" and "a"+"ba"
// over "ab a ba"), where sentencepiece takes the leftmost and tokenizers the lower rank.
json bpe_merges(const SentencePieceModel& model) {
  std::unordered_map<std::string_view, int32_t> normal;
  for (size_t i = 0; i < model.pieces.size(); ++i) {
    if (model.pieces[i].type == Type::normal) normal.emplace(model.pieces[i].text, int32_t(i));
  }
  struct Merge {
    float score;
    int32_t id;
    size_t split;
  };
  std::vector<Merge> merges;
  for (const auto& [text, id] : normal) {
    for (size_t k = 1; k < text.size(); ++k) {
      if (is_utf8_continuation(text[k])) continue;
      if (normal.count(text.substr(0, k)) && normal.count(text.substr(k))) {
        merges.push_back({model.pieces[id].score, id, k});
      }
    }
  }
  std::sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) {
    return std::tie(b.score, a.id, a.split) < std::tie(a.score, b.id, b.split);
  });
  json out = json::array();
  for (const auto& m : merges) {
    const std::string& text = model.pieces[m.id].text;
    out.push_back({text.substr(0, m.split), text.substr(m.split)});
  }
  return out;
}

json bpe_model(const SentencePieceModel& model) {
  json vocab = json::object();
  for (size_t i = 0; i < model.pieces.size(); ++i) vocab[model.pieces[i].text] = i;
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", model.pieces[model.unk_id].text},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", true},  // sentencepiece merges runs of unknown pieces into one
          {"byte_fallback", model.byte_fallback},
          {"ignore_merges", false},
          {"vocab", std::move(vocab)},
          {"merges", bpe_merges(model)}};
}

// sentencepiece normalizes with its precompiled table, then drops leading spaces, collapses
// runs of spaces and drops trailing ones (remove_extra_whitespaces); "space" is U+0020 only,
// so regexes rather than Strip, which would also take U+0085 and the like. The normalizer runs
// on each segment between added tokens: dropping the trailing spaces of every segment (not
// only of the last) is the price, see docs/ARCHITECTURE.md. Leading spaces need no rule when
// a dummy prefix is added: Metaspace does not prepend U+2581 to a segment that begins with one.
json normalizer(const SentencePieceModel& model) {
  auto replace = [](const char* regex, const char* content) {
    return json{{"type", "Replace"}, {"pattern", {{"Regex", regex}}}, {"content", content}};
  };
  json steps = json::array();
  if (!model.precompiled_charsmap.empty()) {
    steps.push_back({{"type", "Precompiled"},
                     {"precompiled_charsmap", base64_encode(model.precompiled_charsmap)}});
  }
  if (model.remove_extra_whitespaces) {
    if (!model.add_dummy_prefix) steps.push_back(replace("\\A +", ""));
    steps.push_back(replace(" +\\z", ""));
    steps.push_back(replace(" {2,}", " "));
  }
  if (steps.empty()) return nullptr;
  return {{"type", "Sequence"}, {"normalizers", std::move(steps)}};
}

// "first": U+2581 before the text's first segment only, as sentencepiece's dummy prefix
// (not before the text that follows an added token such as [MASK]).
std::string prepend_scheme(const SentencePieceModel& model) {
  return model.add_dummy_prefix ? "first" : "never";
}

json metaspace(const SentencePieceModel& model) {
  return {{"type", "Metaspace"},
          {"replacement", kSpaceMarker},
          {"prepend_scheme", prepend_scheme(model)},
          {"split", true}};
}

json decoder(const SentencePieceModel& model) {
  if (!model.byte_fallback) return metaspace(model);
  // Byte pieces must be fused into characters before U+2581 becomes a space.
  return {{"type", "Sequence"},
          {"decoders",
           {{{"type", "Replace"}, {"pattern", {{"String", kSpaceMarker}}}, {"content", " "}},
            {{"type", "ByteFallback"}},
            {{"type", "Fuse"}},
            {{"type", "Strip"},
             {"content", " "},
             {"start", model.add_dummy_prefix ? 1 : 0},
             {"stop", 0}}}}};
}

json template_processing(const SentencePieceModel& model, const SpecialIds& ids) {
  const std::string& cls = model.pieces[ids.cls].text;
  const std::string& sep = model.pieces[ids.sep].text;
  auto special = [](const std::string& token, int type_id) {
    return json{{"SpecialToken", {{"id", token}, {"type_id", type_id}}}};
  };
  auto sequence = [](const char* name, int type_id) {
    return json{{"Sequence", {{"id", name}, {"type_id", type_id}}}};
  };
  return {{"type", "TemplateProcessing"},
          {"single", {special(cls, 0), sequence("A", 0), special(sep, 0)}},
          {"pair",
           {special(cls, 0), sequence("A", 0), special(sep, 0), sequence("B", 1),
            special(sep, 1)}},
          {"special_tokens",
           {{cls, {{"id", cls}, {"ids", {ids.cls}}, {"tokens", {cls}}}},
            {sep, {{"id", sep}, {"ids", {ids.sep}}, {"tokens", {sep}}}}}}};
}

// Control, unknown and user-defined pieces: sentencepiece matches user-defined ones ([MASK])
// in the raw text, before normalization, as tokenizers does with unnormalized added tokens.
json added_tokens(const SentencePieceModel& model, const SpecialIds& ids) {
  const int32_t special_ids[] = {ids.pad, ids.unk, ids.cls, ids.sep, ids.mask};
  json out = json::array();
  for (size_t i = 0; i < model.pieces.size(); ++i) {
    const Type type = model.pieces[i].type;
    const bool listed = std::count(std::begin(special_ids), std::end(special_ids), int32_t(i)) > 0;
    if (!listed && type != Type::control && type != Type::unknown && type != Type::user_defined) {
      continue;
    }
    out.push_back({{"id", i},
                   {"content", model.pieces[i].text},
                   {"single_word", false},
                   {"lstrip", false},
                   {"rstrip", false},
                   {"normalized", false},
                   {"special", listed || type != Type::user_defined}});
  }
  // DeBERTa's [MASK], added after the pieces as transformers' DebertaV2Tokenizer adds it.
  if (ids.mask == static_cast<int32_t>(model.pieces.size()))
    out.push_back({{"id", ids.mask}, {"content", kSpecialPieces[4]}, {"single_word", false}, {"lstrip", false},
                   {"rstrip", false}, {"normalized", false}, {"special", true}});
  return out;
}

void check_expressible(const SentencePieceModel& model, const SpecialIds& ids,
                       const std::string& origin) {
  auto fail = [&](const std::string& what) {
    throw DataError(origin + ": cannot be written as tokenizer.json: " + what);
  };
  if (model.algorithm != SentencePieceModel::Algorithm::unigram &&
      model.algorithm != SentencePieceModel::Algorithm::bpe) {
    fail("model_type " + std::to_string(int(model.algorithm)) + " is neither UNIGRAM nor BPE");
  }
  if (model.treat_whitespace_as_suffix) fail("treat_whitespace_as_suffix is set");
  if (!model.escape_whitespaces) fail("escape_whitespaces is off");
  const int32_t size = static_cast<int32_t>(model.pieces.size());
  if (model.unk_id < 0 || model.unk_id >= size) {
    fail("unk_id " + std::to_string(model.unk_id) + " is not a piece");
  }
  const int32_t special_ids[] = {ids.pad, ids.unk, ids.cls, ids.sep, ids.mask};
  for (int k = 0; k < 5; ++k) {
    const int32_t id = special_ids[k];
    if (k == 4 && id == size) continue;  // [MASK] added after the pieces (DeBERTa's spm.model)
    if (id < 0 || id >= size || model.pieces[id].text != kSpecialPieces[k]) {
      fail(std::string(kSpecialPieces[k]) + " is not piece " + std::to_string(id));
    }
  }
}

}  // namespace

json sentencepiece_tokenizer_json(const std::string& model_proto, const SpecialIds& ids,
                                  const std::string& origin) {
  const SentencePieceModel model = parse_sentencepiece_model(model_proto, origin);
  check_expressible(model, ids, origin);
  const bool unigram = model.algorithm == SentencePieceModel::Algorithm::unigram;
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", added_tokens(model, ids)},
          {"normalizer", normalizer(model)},
          {"pre_tokenizer", metaspace(model)},
          {"post_processor", template_processing(model, ids)},
          {"decoder", decoder(model)},
          {"model", unigram ? unigram_model(model) : bpe_model(model)}};
}

json special_tokens_map_json() {
  return {{"pad_token", kSpecialPieces[0]},
          {"unk_token", kSpecialPieces[1]},
          {"cls_token", kSpecialPieces[2]},
          {"sep_token", kSpecialPieces[3]},
          {"mask_token", kSpecialPieces[4]}};
}

json tokenizer_config_json(int64_t model_max_length) {
  json config = special_tokens_map_json();
  // Loads tokenizer.json as it is (transformers 5 maps the name to TokenizersBackend).
  config["tokenizer_class"] = "PreTrainedTokenizerFast";
  config["model_max_length"] = model_max_length;
  // BERT takes token_type_ids; a generic fast tokenizer returns them only when asked to.
  config["model_input_names"] = {"input_ids", "token_type_ids", "attention_mask"};
  config["clean_up_tokenization_spaces"] = false;
  return config;
}

}  // namespace mlm::text
