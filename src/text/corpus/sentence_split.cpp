#include "mlm/text/corpus/sentence_split.h"

namespace mlm::text {

std::vector<std::string_view> split_sentences(std::string_view text) {
  std::vector<std::string_view> sentences;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t\f\v") != std::string_view::npos) sentences.push_back(line);
  }
  return sentences;
}

}  // namespace mlm::text
