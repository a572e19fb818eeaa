#include "mlm/text/wordpiece/wordpiece.h"

#include <algorithm>
#include <unordered_set>

#include "bert_pre_tokenizer.h"
#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"
#include "mlm/util/utf8_decode.h"

namespace mlm::text {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return !prefix.empty() && s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}


// HF's WordPiece decoder cleanup: no space before . ? ! , and English contractions.
void cleanup_spaces(std::string& text) {
  static constexpr std::pair<std::string_view, std::string_view> kReplacements[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},     {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto& [from, to] : kReplacements) {
    size_t at = 0;
    while ((at = text.find(from, at)) != std::string::npos) {
      text.replace(at, from.size(), to);
      at += to.size();
    }
  }
}

}  // namespace

WordPiece::WordPiece(std::vector<std::string> tokens, WordPieceOptions options,
                     std::vector<AddedToken> added, const std::string& origin)
    : tokens_(std::move(tokens)), options_(std::move(options)), added_(std::move(added)) {
  if (tokens_.empty()) throw DataError("tokenizer '" + origin + "': the vocabulary is empty");
  if (options_.max_input_chars_per_word < 1) {
    throw DataError("tokenizer '" + origin + "': max_input_chars_per_word (" +
                    std::to_string(options_.max_input_chars_per_word) + ") must be >= 1");
  }
  pre_tokenizer_ = std::make_shared<const BertPreTokenizer>(options_.normalizer);
  heads_.reserve(tokens_.size());
  const std::string& prefix = options_.continuing_subword_prefix;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string_view token = tokens_[id];
    if (std::string copy(token); repair_utf8(copy) > 0) {
      throw DataError("tokenizer '" + origin + "': token " + std::to_string(id) +
                      " is not valid UTF-8");
    }
    if (!heads_.emplace(token, static_cast<int32_t>(id)).second) {
      throw DataError("tokenizer '" + origin + "': the token '" + std::string(token) +
                      "' appears twice (ids " + std::to_string(heads_.at(token)) + " and " +
                      std::to_string(id) + ")");
    }
    max_token_bytes_ = std::max(max_token_bytes_, token.size());
    if (starts_with(token, prefix)) {
      continuations_.emplace(token.substr(prefix.size()), static_cast<int32_t>(id));
    }
  }
  const auto unk = heads_.find(options_.unk_token);
  if (unk == heads_.end()) {
    throw DataError("tokenizer '" + origin + "': the unknown token '" + options_.unk_token +
                    "' is not in the vocabulary");
  }
  unk_id_ = unk->second;
  for (const auto& token : added_) {
    if (token.content.empty() || token.id < 0 || static_cast<size_t>(token.id) >= tokens_.size() ||
        tokens_[token.id] != token.content) {
      throw DataError("tokenizer '" + origin + "': the added token '" + token.content +
                      "' (id " + std::to_string(token.id) + ") is not that id's vocabulary entry");
    }
  }
  // Longest first, so the first match at a position is the longest one there.
  std::stable_sort(added_.begin(), added_.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.content.size() > b.content.size();
  });
  for (const auto& token : added_) added_start_[static_cast<unsigned char>(token.content[0])] = true;
}

std::optional<int32_t> WordPiece::token_to_id(std::string_view token) const {
  const auto it = heads_.find(token);
  if (it == heads_.end()) return std::nullopt;
  return it->second;
}

bool WordPiece::is_continuation(int32_t id) const {
  return starts_with(tokens_.at(static_cast<size_t>(id)), options_.continuing_subword_prefix);
}

void WordPiece::encode(std::string_view text, std::vector<int32_t>& out) const {
  // Added tokens are found in the raw text, leftmost first, the longest at a position; the
  // text between them is normalized and split on its own.
  thread_local BertWords words;
  const auto encode_segment = [&](std::string_view segment) {
    if (segment.empty()) return;
    words.clear();
    pre_tokenizer_->split(segment, words);
    uint32_t begin = 0;
    for (const auto& word : words.words) {
      encode_word(std::string_view(words.bytes).substr(begin, word.end - begin), word.chars, out);
      begin = word.end;
    }
  };
  size_t segment_begin = 0;
  if (!added_.empty()) {
    for (size_t i = 0; i < text.size(); ++i) {
      if (!added_start_[static_cast<unsigned char>(text[i])]) continue;
      for (const auto& token : added_) {
        if (text.compare(i, token.content.size(), token.content) != 0) continue;
        encode_segment(text.substr(segment_begin, i - segment_begin));
        out.push_back(token.id);
        segment_begin = i + token.content.size();
        i = segment_begin - 1;
        break;
      }
    }
  }
  encode_segment(text.substr(segment_begin));
}

void WordPiece::encode_word(std::string_view word, size_t chars, std::vector<int32_t>& out) const {
  if (chars > static_cast<size_t>(options_.max_input_chars_per_word)) {
    out.push_back(unk_id_);
    return;
  }
  const size_t first = out.size();
  size_t start = 0;
  while (start < word.size()) {
    const auto& pieces = start == 0 ? heads_ : continuations_;
    size_t end = std::min(word.size(), start + max_token_bytes_);
    while (end < word.size() && is_utf8_continuation(word[end])) --end;
    int32_t found = -1;
    while (end > start) {
      const auto it = pieces.find(word.substr(start, end - start));
      if (it != pieces.end()) {
        found = it->second;
        break;
      }
      do --end;
      while (end > start && is_utf8_continuation(word[end]));
    }
    if (found < 0) {  // no piece fits here: the whole word is unknown
      out.resize(first);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

std::string WordPiece::decode(const std::vector<int32_t>& ids) const {
  // As HF's WordPiece decoder: each piece gets its leading space (or loses its prefix), then
  // is cleaned up on its own, so "' s" stays apart while " ," loses its space.
  std::string text, piece;
  const std::string& prefix = options_.continuing_subword_prefix;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= tokens_.size()) {
      throw DataError("tokenizer: cannot decode id " + std::to_string(ids[i]) +
                      ": the vocabulary has " + std::to_string(tokens_.size()) + " tokens");
    }
    const std::string_view token = tokens_[ids[i]];
    piece.clear();
    if (i > 0 && starts_with(token, prefix)) {
      piece.append(token.substr(prefix.size()));
    } else {
      if (i > 0) piece.push_back(' ');
      piece.append(token);
    }
    cleanup_spaces(piece);
    text += piece;
  }
  return text;
}

}  // namespace mlm::text
