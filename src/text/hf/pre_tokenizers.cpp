// The pre-tokenizers of tokenizers (tokenizers/src/pre_tokenizers/): each splits one piece
// into pre-tokens, which the model then encodes separately (and which whole-word masking
// counts as words).
#include "../wordpiece/bert_chars.h"
#include "byte_level.h"
#include "components.h"
#include "splitting.h"
#include "unicode_chars.h"

namespace mlm::text::hf {
namespace pre_tokenizers_detail {

// GPT-2's pattern (tokenizers/src/pre_tokenizers/byte_level.rs).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevel : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        regex_(use_regex ? std::make_unique<OnigRegex>(kGpt2Pattern) : nullptr) {}
  void split(std::string_view text, bool at_text_start, Pieces& out) const override {
    thread_local std::string spaced, mapped;
    thread_local std::vector<Span> spans;
    if (add_prefix_space_ && (text.empty() || text.front() != ' ')) {
      spaced.assign(" ");
      spaced.append(text);
      text = spaced;
    }
    if (!regex_) {
      spans.assign(1, Span{0, static_cast<uint32_t>(text.size()), false});
    } else {
      regex_->spans(text, spans);
    }
    for (const auto& s : spans) {
      if (s.begin == s.end) continue;
      mapped.clear();
      append_byte_level(text.substr(s.begin, s.end - s.begin), mapped);
      out.add(mapped, at_text_start && s.begin == 0);
    }
  }
  // GPT-2's pattern starts a pre-token at a space ("Ġ") and at punctuation after a letter or
  // digit; a letter or digit without the space continues one, as does a piece that begins
  // inside a character (a UTF-8 continuation byte) or holds only part of its first one.
  std::optional<bool> piece_starts_word(std::string_view piece) const override {
    std::string bytes;  // the piece's first character, back from its byte-level form
    for (size_t i = 0; i < piece.size() && bytes.size() < 4;) {
      const auto b = byte_of_char(next_code_point(piece, i));
      if (!b) return true;  // not a byte-level piece: an added token
      bytes += static_cast<char>(*b);
      if (utf8_lead_length(static_cast<uint8_t>(bytes[0])) == bytes.size()) break;
    }
    if (bytes.empty()) return false;
    const Utf8Char first = decode_utf8(bytes, 0);
    if (first.length == 0) return false;  // not a whole character
    return !is_rust_alphanumeric(first.code_point);
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<OnigRegex> regex_;
};

class Metaspace : public PreTokenizer {
 public:
  enum class Prepend { always, first, never };
  Metaspace(std::string replacement, Prepend prepend, bool split)
      : replacement_(std::move(replacement)), prepend_(prepend), split_(split) {}
  void split(std::string_view text, bool at_text_start, Pieces& out) const override {
    thread_local std::string replaced;
    thread_local std::vector<Span> spans;
    replaced.clear();
    for (char c : text) {
      if (c == ' ') {
        replaced += replacement_;
      } else {
        replaced += c;
      }
    }
    const bool starts_with_it = replaced.compare(0, replacement_.size(), replacement_) == 0;
    if (!starts_with_it && (prepend_ == Prepend::always || (prepend_ == Prepend::first && at_text_start))) {
      replaced.insert(0, replacement_);
    }
    if (!split_) {
      out.add(replaced, at_text_start);
      return;
    }
    literal_spans(replaced, replacement_, spans);
    split_spans(replaced, at_text_start, spans, SplitBehavior::merged_with_next, false, out);
  }
  std::optional<bool> piece_starts_word(std::string_view piece) const override {
    return piece.substr(0, replacement_.size()) == replacement_;
  }

 private:
  std::string replacement_;
  Prepend prepend_;
  bool split_;
};

// Split, Whitespace, WhitespaceSplit, Punctuation, Digits, CharDelimiterSplit: a pattern and a
// behavior.
class PatternSplit : public PreTokenizer {
 public:
  using CharTest = bool (*)(char32_t);
  PatternSplit(std::string literal, std::unique_ptr<OnigRegex> regex, CharTest test,
               SplitBehavior behavior, bool invert)
      : literal_(std::move(literal)), regex_(std::move(regex)), test_(test), behavior_(behavior), invert_(invert) {}
  void split(std::string_view text, bool at_text_start, Pieces& out) const override {
    thread_local std::vector<Span> spans;
    if (regex_) {
      regex_->spans(text, spans);
    } else if (test_) {
      char_spans(text, test_, spans);
    } else {
      literal_spans(text, literal_, spans);
    }
    split_spans(text, at_text_start, spans, behavior_, invert_, out);
  }

 private:
  std::string literal_;
  std::unique_ptr<OnigRegex> regex_;
  CharTest test_;
  SplitBehavior behavior_;
  bool invert_;
};

class BertPreTokenizer : public PreTokenizer {
 public:
  void split(std::string_view text, bool at_text_start, Pieces& out) const override {
    thread_local Pieces words;
    thread_local std::vector<Span> spans;
    words.clear();
    char_spans(text, is_rust_whitespace, spans);
    split_spans(text, at_text_start, spans, SplitBehavior::removed, false, words);
    for (const auto& w : words.pieces) {
      const std::string_view word = words.view(w);
      char_spans(word, bert::is_punctuation, spans);
      split_spans(word, w.at_text_start, spans, SplitBehavior::isolated, false, out);
    }
  }
};

class PreTokenizerSequence : public PreTokenizer {
 public:
  explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void split(std::string_view text, bool at_text_start, Pieces& out) const override {
    if (steps_.empty()) {
      out.add(text, at_text_start);
      return;
    }
    Pieces current, next;
    current.add(text, at_text_start);
    for (size_t k = 0; k < steps_.size(); ++k) {
      Pieces& target = k + 1 == steps_.size() ? out : next;
      if (&target == &next) next.clear();
      for (const auto& p : current.pieces) steps_[k]->split(current.view(p), p.at_text_start, target);
      if (&target == &next) std::swap(current, next);
    }
  }
  std::optional<bool> piece_starts_word(std::string_view piece) const override {
    for (const auto& step : steps_) {
      if (auto starts = step->piece_starts_word(piece)) return starts;
    }
    return std::nullopt;
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

bool is_numeric(char32_t c) { return is_rust_numeric(c); }
bool is_punctuation(char32_t c) { return bert::is_punctuation(c); }
bool is_whitespace(char32_t c) { return is_rust_whitespace(c); }

SplitBehavior behavior_of(const JsonReader& json, const char* fallback) {
  bool ok = false;
  const auto name = json.string_or("behavior", fallback);
  const auto behavior = split_behavior_from(name, &ok);
  if (!ok) {
    json.fail("'" + name + "' is not a split behavior (Removed, Isolated, MergedWithPrevious, "
              "MergedWithNext, Contiguous)", "behavior");
  }
  return behavior;
}

}  // namespace pre_tokenizers_detail

namespace pre_tokenizers_detail {

std::unique_ptr<PreTokenizer> make_byte_level(const JsonReader& json) {
  return std::make_unique<ByteLevel>(json.boolean_or("add_prefix_space", true), json.boolean_or("use_regex", true));
}

std::unique_ptr<PreTokenizer> make_metaspace(const JsonReader& json) {
  std::string replacement = json.has("replacement") ? json.string("replacement") : json.string_or("str_rep", "\xE2\x96\x81");
  Metaspace::Prepend prepend = Metaspace::Prepend::always;
  if (json.has("prepend_scheme")) {
    const auto scheme = json.string("prepend_scheme");
    if (scheme == "always") {
      prepend = Metaspace::Prepend::always;
    } else if (scheme == "first") {
      prepend = Metaspace::Prepend::first;
    } else if (scheme == "never") {
      prepend = Metaspace::Prepend::never;
    } else {
      json.fail("'" + scheme + "' is not a prepend scheme (always, first, never)", "prepend_scheme");
    }
  } else if (!json.boolean_or("add_prefix_space", true)) {
    prepend = Metaspace::Prepend::never;  // the format before prepend_scheme
  }
  return std::make_unique<Metaspace>(std::move(replacement), prepend, json.boolean_or("split", true));
}

std::unique_ptr<PreTokenizer> make_whitespace(const JsonReader&) {
  // \w+|[^\w\s]+ kept, the rest (whitespace) removed.
  return std::make_unique<PatternSplit>("", std::make_unique<OnigRegex>(R"(\w+|[^\w\s]+)", RegexDialect::rust_regex),
                                        nullptr, SplitBehavior::removed, true);
}

std::unique_ptr<PreTokenizer> make_whitespace_split(const JsonReader&) {
  return std::make_unique<PatternSplit>("", nullptr, is_whitespace, SplitBehavior::removed, false);
}

std::unique_ptr<PreTokenizer> make_punctuation(const JsonReader& json) {
  return std::make_unique<PatternSplit>("", nullptr, is_punctuation, behavior_of(json, "Isolated"), false);
}

std::unique_ptr<PreTokenizer> make_digits(const JsonReader& json) {
  return std::make_unique<PatternSplit>(
      "", nullptr, is_numeric,
      json.boolean_or("individual_digits", false) ? SplitBehavior::isolated : SplitBehavior::contiguous, false);
}

std::unique_ptr<PreTokenizer> make_char_delimiter_split(const JsonReader& json) {
  return std::make_unique<PatternSplit>(json.string("delimiter"), nullptr, nullptr, SplitBehavior::removed, false);
}

std::unique_ptr<PreTokenizer> make_split(const JsonReader& json) {
  std::string literal;
  std::unique_ptr<OnigRegex> regex;
  read_pattern(json, literal, regex);
  return std::make_unique<PatternSplit>(std::move(literal), std::move(regex), nullptr, behavior_of(json, "Isolated"),
                                        json.boolean_or("invert", false));
}

std::unique_ptr<PreTokenizer> make_sequence(const JsonReader& json) {
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  for (const auto& step : json.array("pretokenizers")) steps.push_back(make_pre_tokenizer(step));
  return std::make_unique<PreTokenizerSequence>(std::move(steps));
}

using Entry = Registered<std::unique_ptr<PreTokenizer>>;

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"ByteLevel", make_byte_level},
      {"Metaspace", make_metaspace},
      {"Whitespace", make_whitespace},
      {"WhitespaceSplit", make_whitespace_split},
      {"BertPreTokenizer",
       [](const JsonReader&) -> std::unique_ptr<PreTokenizer> { return std::make_unique<BertPreTokenizer>(); }},
      {"Split", make_split},
      {"Digits", make_digits},
      {"Punctuation", make_punctuation},
      {"CharDelimiterSplit", make_char_delimiter_split},
      {"UnicodeScripts", make_unicode_scripts},
      {"FixedLength", make_fixed_length},
      {"Sequence", make_sequence},
  };
  return entries;
}

}  // namespace pre_tokenizers_detail

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const JsonReader& json) {
  return registered(pre_tokenizers_detail::table(), json, "pre-tokenizer").make(json);
}

std::vector<std::string> pre_tokenizer_types() { return type_names(pre_tokenizers_detail::table()); }

}  // namespace mlm::text::hf
