// The normalizers of tokenizers (tokenizers/src/normalizers/), each rewriting the whole
// segment between added tokens.
#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

#include <algorithm>

#include "../wordpiece/bert_chars.h"
#include "components.h"
#include "mlm/util/base64.h"
#include "precompiled.h"
#include "splitting.h"
#include "unicode_chars.h"

namespace mlm::text::hf {
namespace normalizers_detail {

class UnicodeForm : public Normalizer {
 public:
  explicit UnicodeForm(const icu::Normalizer2* form) : form_(form) {}
  void normalize(std::string& text) const override {
    UErrorCode status = U_ZERO_ERROR;
    if (form_->isNormalizedUTF8(text, status) && U_SUCCESS(status)) return;
    status = U_ZERO_ERROR;
    std::string out;
    icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(text.size()));
    form_->normalizeUTF8(0, text, sink, nullptr, status);
    if (U_SUCCESS(status)) text.swap(out);
  }

 private:
  const icu::Normalizer2* form_;
};

const icu::Normalizer2* unicode_form(const std::string& type) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* form = type == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
                                 : type == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
                                 : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                                                  : icu::Normalizer2::getNFKDInstance(status);
  return U_SUCCESS(status) ? form : nullptr;
}

// Rewrites text character by character: `map(c, out)` appends what c becomes.
template <class Map>
void map_chars(std::string& text, Map&& map) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) map(next_code_point(text, i), out);
  text.swap(out);
}

// Rust's char::to_lowercase, one character at a time (no final-sigma rule): as
// NormalizedString::lowercase.
void append_lower(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  char32_t lower[3];
  const int n = bert::to_lower(c, lower);
  for (int k = 0; k < n; ++k) append_utf8(out, lower[k]);
}

class Lowercase : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    if (std::none_of(text.begin(), text.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c & 0x80); })) return;
    map_chars(text, append_lower);
  }
};

class StripAccents : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    map_chars(text, [](char32_t c, std::string& out) {
      if (!is_mark(c)) append_utf8(out, c);
    });
  }
};

class Strip : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      for (size_t i = 0; i < end;) {
        if (!is_rust_whitespace(next_code_point(text, i))) break;
        begin = i;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && is_utf8_continuation(text[start])) --start;
        size_t i = start;
        if (!is_rust_whitespace(next_code_point(text, i))) break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class Replace : public Normalizer {
 public:
  Replace(std::string literal, std::unique_ptr<OnigRegex> regex, std::string content)
      : literal_(std::move(literal)), regex_(std::move(regex)), content_(std::move(content)) {}
  void normalize(std::string& text) const override {
    std::vector<Span> spans;
    if (regex_) {
      regex_->spans(text, spans);
    } else {
      literal_spans(text, literal_, spans);
    }
    std::string out;
    out.reserve(text.size());
    for (const auto& s : spans) {
      if (s.is_match) {
        out += content_;
      } else {
        out.append(text, s.begin, s.end - s.begin);
      }
    }
    text.swap(out);
  }

 private:
  std::string literal_;
  std::unique_ptr<OnigRegex> regex_;
  std::string content_;
};

class Prepend : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

// BertNormalizer: clean text, spaces around CJK ideographs, NFD + drop Mn, lower case; with
// the character data the WordPiece room matches to tokenizers' (old) tables.
class BertNormalizer : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool chinese, bool strip_accents, bool lowercase)
      : clean_text_(clean_text), chinese_(chinese), strip_accents_(strip_accents), lowercase_(lowercase) {}
  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size() + 8);
    std::vector<char32_t> run;  // a starter and its combining marks, for canonical ordering
    auto flush = [&] {
      // NFD orders marks by combining class (stable); a starter (class 0) never moves.
      std::stable_sort(run.begin(), run.end(), [](char32_t a, char32_t b) {
        const uint8_t ca = bert::combining_class(a), cb = bert::combining_class(b);
        return ca != 0 && cb != 0 && ca < cb;
      });
      for (char32_t c : run) {
        if (strip_accents_ && bert::is_nonspacing_mark(c)) continue;
        if (lowercase_) {
          append_lower(c, out);
        } else {
          append_utf8(out, c);
        }
      }
      run.clear();
    };
    auto push = [&](char32_t c) {
      if (!strip_accents_) {
        run.push_back(c);
        flush();
        return;
      }
      char32_t parts[bert::kMaxDecomposition];
      const int n = bert::decompose(c, parts);
      for (int k = 0; k < n; ++k) {
        if (bert::combining_class(parts[k]) == 0) flush();
        run.push_back(parts[k]);
      }
    };
    for (size_t i = 0; i < text.size();) {
      char32_t c = next_code_point(text, i);
      if (clean_text_) {
        if (bert::is_removed_by_clean_text(c)) continue;
        if (bert::is_whitespace(c)) c = ' ';
      }
      if (chinese_ && bert::is_cjk_ideograph(c)) {
        push(' ');
        push(c);
        push(' ');
      } else {
        push(c);
      }
    }
    flush();
    text.swap(out);
  }

 private:
  bool clean_text_, chinese_, strip_accents_, lowercase_;
};

class NormalizerSequence : public Normalizer {
 public:
  explicit NormalizerSequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace normalizers_detail

/// A Split/Replace "pattern": {"String": s} or {"Regex": r}; sets exactly one of the outputs.
void read_pattern(const JsonReader& json, std::string& literal, std::unique_ptr<OnigRegex>& regex) {
  const JsonReader pattern = json.at("pattern");
  if (pattern.has("String")) {
    literal = pattern.string("String");
  } else if (pattern.has("Regex")) {
    try {
      regex = std::make_unique<OnigRegex>(pattern.string("Regex"));
    } catch (const std::invalid_argument& e) {
      pattern.fail(e.what(), "Regex");
    }
  } else {
    pattern.fail("expected {\"String\": ...} or {\"Regex\": ...}");
  }
}

namespace normalizers_detail {

std::unique_ptr<Normalizer> make_unicode_form(const JsonReader& json) {
  const std::string type = json.type();
  const auto* form = unicode_form(type);
  if (!form) json.fail("ICU has no " + type + " data");
  return std::make_unique<UnicodeForm>(form);
}

std::unique_ptr<Normalizer> make_replace(const JsonReader& json) {
  std::string literal;
  std::unique_ptr<OnigRegex> regex;
  read_pattern(json, literal, regex);
  return std::make_unique<Replace>(std::move(literal), std::move(regex), json.string("content"));
}

std::unique_ptr<Normalizer> make_precompiled(const JsonReader& json) {
  const auto blob = json.has("precompiled_charsmap") ? json.string("precompiled_charsmap") : std::string();
  if (blob.empty()) return std::make_unique<NormalizerSequence>(std::vector<std::unique_ptr<Normalizer>>{});
  auto bytes = base64_decode(blob);
  if (!bytes) json.fail("not base64", "precompiled_charsmap");
  try {
    return std::make_unique<PrecompiledNormalizer>(std::move(*bytes));
  } catch (const std::invalid_argument& e) {
    json.fail(e.what(), "precompiled_charsmap");
  }
}

std::unique_ptr<Normalizer> make_bert(const JsonReader& json) {
  const bool lowercase = json.boolean_or("lowercase", true);
  return std::make_unique<BertNormalizer>(json.boolean_or("clean_text", true),
                                          json.boolean_or("handle_chinese_chars", true),
                                          json.optional_boolean("strip_accents").value_or(lowercase), lowercase);
}

std::unique_ptr<Normalizer> make_sequence(const JsonReader& json) {
  std::vector<std::unique_ptr<Normalizer>> steps;
  for (const auto& step : json.array("normalizers")) steps.push_back(make_normalizer(step));
  return std::make_unique<NormalizerSequence>(std::move(steps));
}

using Entry = Registered<std::unique_ptr<Normalizer>>;

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"NFC", make_unicode_form},
      {"NFD", make_unicode_form},
      {"NFKC", make_unicode_form},
      {"NFKD", make_unicode_form},
      {"Lowercase", [](const JsonReader&) -> std::unique_ptr<Normalizer> { return std::make_unique<Lowercase>(); }},
      {"StripAccents", [](const JsonReader&) -> std::unique_ptr<Normalizer> { return std::make_unique<StripAccents>(); }},
      {"Strip",
       [](const JsonReader& json) -> std::unique_ptr<Normalizer> {
         return std::make_unique<Strip>(json.boolean_or("strip_left", true), json.boolean_or("strip_right", true));
       }},
      {"Replace", make_replace},
      {"Prepend",
       [](const JsonReader& json) -> std::unique_ptr<Normalizer> { return std::make_unique<Prepend>(json.string("prepend")); }},
      {"Precompiled", make_precompiled},
      {"BertNormalizer", make_bert},
      {"Nmt", make_nmt},
      {"ByteLevel", make_byte_level_normalizer},
      {"Sequence", make_sequence},
  };
  return entries;
}

}  // namespace normalizers_detail

std::unique_ptr<Normalizer> make_normalizer(const JsonReader& json) {
  return registered(normalizers_detail::table(), json, "normalizer").make(json);
}

std::vector<std::string> normalizer_types() { return type_names(normalizers_detail::table()); }

}  // namespace mlm::text::hf
