#pragma once
// What a sentence is for packing (data.packing: sentences): one line of a document's text.
// A plain-text document in blank_line mode is its lines, a document in line mode is one
// sentence, a JSON Lines text is split at its '\n's. Corpora are usually one sentence or one
// paragraph per line (BERT's own input format is one sentence per line, a blank line between
// documents), and a line is the one boundary every format keeps; a language-specific
// splitter would guess where the corpus author already decided.
#include <string_view>
#include <vector>

namespace mlm::text {

/// The lines of `text` that are not blank, in order, without a trailing '\r'.
std::vector<std::string_view> split_sentences(std::string_view text);

}  // namespace mlm::text
