#include "bert_pre_tokenizer.h"

#include "bert_chars.h"
#include "mlm/text/utf8.h"
#include "mlm/util/utf8_decode.h"

namespace mlm::text {
namespace {

// The state of one split(): the word being built, and the combining marks NFD may still
// reorder (kept marks with a nonzero combining class since the last starter).
class Splitter {
 public:
  Splitter(const BertNormalizerOptions& options, bool strip_accents, BertWords& out)
      : options_(options), strip_accents_(strip_accents), out_(out), word_begin_(out.bytes.size()) {}

  void ascii_char(char c) {
    flush_marks();
    out_.bytes.push_back(c);
    ++chars_;
  }
  void end_word() {
    if (out_.bytes.size() > word_begin_) {
      out_.words.push_back({static_cast<uint32_t>(out_.bytes.size()), chars_});
    }
    word_begin_ = out_.bytes.size();
    chars_ = 0;
  }
  void punctuation(char32_t c) {
    end_word();
    append_utf8(out_.bytes, c);
    ++chars_;
    end_word();
  }
  void boundary() {
    flush_marks();
    end_word();
  }
  void finish() {
    flush_marks();
    end_word();
  }

  // One code point of the input: clean_text, then handle_chinese_chars.
  void input(char32_t c) {
    const uint8_t f = bert::flags(c);
    if (options_.clean_text && (f & bert::kRemoved)) return;
    if (options_.clean_text && (f & bert::kWhitespace)) c = ' ';
    if (options_.handle_chinese_chars && (f & bert::kCjk)) {
      boundary();
      strip_accents(c);
      boundary();
      return;
    }
    strip_accents(c);
  }

 private:
  // NFD, dropping nonspacing marks; a starter (combining class 0, dropped or not) ends the
  // run of marks NFD orders.
  void strip_accents(char32_t c) {
    if (!strip_accents_) return lower(c);
    const uint8_t f = bert::flags(c);
    if (!(f & (bert::kDecomposes | bert::kCombining | bert::kNonspacing))) {
      flush_marks();
      return lower(c);
    }
    char32_t parts[bert::kMaxDecomposition];
    const int n = bert::decompose(c, parts);
    for (int k = 0; k < n; ++k) {
      const char32_t x = parts[k];
      const uint8_t fx = bert::flags(x);
      const uint8_t ccc = (fx & bert::kCombining) ? bert::combining_class(x) : 0;
      if (ccc == 0) flush_marks();
      if (fx & bert::kNonspacing) continue;
      if (ccc == 0) {
        lower(x);
        continue;
      }
      size_t at = marks_.size();  // stable insertion by combining class
      marks_.push_back({ccc, x});
      while (at > 0 && marks_[at - 1].ccc > ccc) {
        std::swap(marks_[at - 1], marks_[at]);
        --at;
      }
    }
  }

  void flush_marks() {
    if (marks_.empty()) return;
    for (const auto& mark : marks_) lower(mark.c);
    marks_.clear();
  }

  void lower(char32_t c) {
    if (options_.lowercase && (bert::flags(c) & bert::kLowerDiffers)) {
      char32_t lowered[3];
      const int n = bert::to_lower(c, lowered);
      for (int k = 0; k < n; ++k) pre_tokenize(lowered[k]);
      return;
    }
    pre_tokenize(c);
  }

  // BertPreTokenizer on a normalized code point.
  void pre_tokenize(char32_t c) {
    const uint8_t f = bert::flags(c);
    if (f & bert::kWhitespace) return end_word();
    if (f & bert::kPunctuation) return punctuation(c);
    append_utf8(out_.bytes, c);
    ++chars_;
  }

  struct Mark {
    uint8_t ccc;
    char32_t c;
  };
  const BertNormalizerOptions& options_;
  const bool strip_accents_;
  BertWords& out_;
  size_t word_begin_;
  uint32_t chars_ = 0;
  std::vector<Mark> marks_;  // rarely non-empty: allocates only for reordered marks
};

}  // namespace

BertPreTokenizer::BertPreTokenizer(const BertNormalizerOptions& options)
    : options_(options), strip_accents_(options.strips_accents()) {
  for (char32_t c = 0; c < 128; ++c) {
    const uint8_t f = bert::flags(c);
    Ascii action = Ascii::append;
    if (options_.clean_text && (f & bert::kRemoved)) {
      action = Ascii::skip;
    } else if (f & bert::kWhitespace) {
      action = Ascii::boundary;
    } else if (f & bert::kPunctuation) {
      action = Ascii::punctuation;
    }
    ascii_[c] = action;
  }
}

void BertPreTokenizer::split(std::string_view text, BertWords& out) const {
  Splitter splitter(options_, strip_accents_, out);
  const bool lowercase = options_.lowercase;
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      splitter.input(next_code_point(text, i));
      continue;
    }
    ++i;
    switch (ascii_[byte]) {
      case Ascii::append:
        splitter.ascii_char(lowercase && byte >= 'A' && byte <= 'Z' ? static_cast<char>(byte + 32)
                                                                    : static_cast<char>(byte));
        break;
      case Ascii::boundary:
        splitter.boundary();
        break;
      case Ascii::punctuation:
        splitter.boundary();
        splitter.punctuation(byte);
        break;
      case Ascii::skip:
        break;
    }
  }
  splitter.finish();
}

std::vector<std::string> bert_words(std::string_view text, const BertNormalizerOptions& options) {
  BertWords words;
  BertPreTokenizer(options).split(text, words);
  std::vector<std::string> out;
  uint32_t begin = 0;
  for (const auto& word : words.words) {
    out.push_back(words.bytes.substr(begin, word.end - begin));
    begin = word.end;
  }
  return out;
}

}  // namespace mlm::text
