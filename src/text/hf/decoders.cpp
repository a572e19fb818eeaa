#include "decoders.h"

#include <cctype>

#include "byte_level.h"
#include "components.h"
#include "mlm/text/utf8.h"
#include "splitting.h"
#include "unicode_chars.h"

namespace mlm::text::hf {
namespace decoders_detail {

class ByteLevelDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) {
      const size_t before = bytes.size();
      bool all = true;
      for (size_t i = 0; i < t.size() && all;) {
        const auto b = byte_of_char(next_code_point(t, i));
        if (b) bytes += static_cast<char>(*b);
        all = b.has_value();
      }
      if (!all) bytes.replace(before, std::string::npos, t);  // kept as it is
    }
    repair_utf8(bytes);  // String::from_utf8_lossy
    tokens.assign(1, std::move(bytes));
  }
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first) : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) {
      std::string out;
      const std::string& t = tokens[k];
      for (size_t i = 0; i < t.size();) {
        if (t.compare(i, replacement_.size(), replacement_) == 0) {
          if (!(k == 0 && strip_first_)) out += ' ';
          i += replacement_.size();
        } else {
          out += t[i++];
        }
      }
      tokens[k] = std::move(out);
    }
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// Spaces before punctuation and inside English contractions (the WordPiece and CTC
// decoders' cleanup).
void wordpiece_cleanup(std::string& t) {
  for (auto [from, to] : {std::pair{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
                          {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"},
                          {" 've", "'ve"}, {" 're", "'re"}}) {
    replace_all(t, from, to);
  }
}

class WordPieceDecoder : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) {
      std::string& t = tokens[k];
      if (k != 0) {
        if (t.compare(0, prefix_.size(), prefix_) == 0) {
          t.erase(0, prefix_.size());
        } else {
          t.insert(0, " ");
        }
      }
      if (cleanup_) wordpiece_cleanup(t);
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class ByteFallbackDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    size_t count = 0;
    auto flush = [&] {
      if (count == 0) return;
      std::string copy = bytes;
      if (repair_utf8(copy) == 0) {
        out.push_back(bytes);
      } else {
        for (size_t k = 0; k < count; ++k) out.push_back("\xEF\xBF\xBD");
      }
      bytes.clear();
      count = 0;
    };
    for (auto& t : tokens) {
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && std::isxdigit(uint8_t(t[3])) &&
          std::isxdigit(uint8_t(t[4]))) {
        bytes += static_cast<char>(std::stoi(t.substr(3, 2), nullptr, 16));
        ++count;
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens = std::move(out);
  }
};

class FuseDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      for (size_t k = 0; k < start_ && t.compare(0, content_.size(), content_) == 0; ++k) t.erase(0, content_.size());
      for (size_t k = 0; k < stop_ && t.size() >= content_.size() &&
                         t.compare(t.size() - content_.size(), content_.size(), content_) == 0; ++k) {
        t.resize(t.size() - content_.size());
      }
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(std::string literal, std::unique_ptr<OnigRegex> regex, std::string content)
      : literal_(std::move(literal)), regex_(std::move(regex)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<Span> spans;
    for (auto& t : tokens) {
      if (regex_) {
        regex_->spans(t, spans);
      } else {
        literal_spans(t, literal_, spans);
      }
      std::string out;
      for (const auto& s : spans) out += s.is_match ? content_ : t.substr(s.begin, s.end - s.begin);
      t = std::move(out);
    }
  }

 private:
  std::string literal_;
  std::unique_ptr<OnigRegex> regex_;
  std::string content_;
};

class BpeDecoder : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) replace_all(tokens[k], suffix_, k + 1 == tokens.size() ? "" : " ");
  }

 private:
  std::string suffix_;
};

// CTC: repeats collapsed, the pad piece removed, the word delimiter read as a space
// (with cleanup); pieces that end empty are dropped.
class CtcDecoder : public Decoder {
 public:
  CtcDecoder(std::string pad, std::string delimiter, bool cleanup)
      : pad_(std::move(pad)), delimiter_(std::move(delimiter)), cleanup_(cleanup) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    for (size_t k = 0; k < tokens.size(); ++k) {
      if (k > 0 && tokens[k] == tokens[k - 1]) continue;
      std::string t = tokens[k];
      if (!pad_.empty()) replace_all(t, pad_, "");
      if (cleanup_) {
        wordpiece_cleanup(t);
        if (!delimiter_.empty()) replace_all(t, delimiter_, " ");
      }
      if (!t.empty()) out.push_back(std::move(t));
    }
    tokens = std::move(out);
  }

 private:
  std::string pad_, delimiter_;
  bool cleanup_;
};

class DecoderSequence : public Decoder {
 public:
  explicit DecoderSequence(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& s : steps_) s->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace decoders_detail

namespace decoders_detail {

std::unique_ptr<Decoder> make_metaspace(const JsonReader& json) {
  const bool strip_first = json.has("prepend_scheme") ? json.string("prepend_scheme") != "never"
                                                      : json.boolean_or("add_prefix_space", true);
  return std::make_unique<MetaspaceDecoder>(json.string_or("replacement", "\xE2\x96\x81"), strip_first);
}

std::unique_ptr<Decoder> make_replace(const JsonReader& json) {
  std::string literal;
  std::unique_ptr<OnigRegex> regex;
  read_pattern(json, literal, regex);
  return std::make_unique<ReplaceDecoder>(std::move(literal), std::move(regex), json.string("content"));
}

std::unique_ptr<Decoder> make_strip(const JsonReader& json) {
  return std::make_unique<StripDecoder>(json.string_or("content", " "), json.integer("start"), json.integer("stop"));
}

std::unique_ptr<Decoder> make_ctc(const JsonReader& json) {
  return std::make_unique<CtcDecoder>(json.string_or("pad_token", "<pad>"), json.string_or("word_delimiter_token", "|"),
                                      json.boolean_or("cleanup", true));
}

std::unique_ptr<Decoder> make_sequence(const JsonReader& json) {
  std::vector<std::unique_ptr<Decoder>> steps;
  for (const auto& step : json.array("decoders")) steps.push_back(make_decoder(step));
  return std::make_unique<DecoderSequence>(std::move(steps));
}

using Entry = Registered<std::unique_ptr<Decoder>>;

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"ByteLevel", [](const JsonReader&) -> std::unique_ptr<Decoder> { return std::make_unique<ByteLevelDecoder>(); }},
      {"Metaspace", make_metaspace},
      {"WordPiece",
       [](const JsonReader& json) -> std::unique_ptr<Decoder> {
         return std::make_unique<WordPieceDecoder>(json.string_or("prefix", "##"), json.boolean_or("cleanup", true));
       }},
      {"ByteFallback", [](const JsonReader&) -> std::unique_ptr<Decoder> { return std::make_unique<ByteFallbackDecoder>(); }},
      {"Fuse", [](const JsonReader&) -> std::unique_ptr<Decoder> { return std::make_unique<FuseDecoder>(); }},
      {"Strip", make_strip},
      {"Replace", make_replace},
      {"BPEDecoder",
       [](const JsonReader& json) -> std::unique_ptr<Decoder> {
         return std::make_unique<BpeDecoder>(json.string_or("suffix", "</w>"));
       }},
      {"CTC", make_ctc},
      {"Sequence", make_sequence},
  };
  return entries;
}

}  // namespace decoders_detail

std::unique_ptr<Decoder> make_decoder(const JsonReader& json) {
  return registered(decoders_detail::table(), json, "decoder").make(json);
}

std::vector<std::string> decoder_types() { return type_names(decoders_detail::table()); }

}  // namespace mlm::text::hf
