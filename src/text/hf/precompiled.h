#pragma once
// sentencepiece's precompiled normalization table ("precompiled_charsmap", XLM-R, T5, ...):
// a Darts double-array trie over UTF-8 keys whose values index NUL-terminated replacements.
// Applied as tokenizers' Precompiled normalizer applies it (spm_precompiled crate), which is
// not quite sentencepiece's longest match: per extended grapheme cluster, a cluster under 6
// bytes is replaced whole by the mapping of its shortest mapped prefix; otherwise (or when it
// has none) each character by its own mapping.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline.h"

namespace mlm::text::hf {

class PrecompiledNormalizer : public Normalizer {
 public:
  /// `charsmap`: the decoded blob (uint32 trie size in bytes, the trie, the replacements).
  /// std::invalid_argument when it is malformed.
  explicit PrecompiledNormalizer(std::string charsmap);
  void normalize(std::string& text) const override;

 private:
  /// The replacement of the shortest mapped prefix of `chunk`, if any.
  std::optional<std::string_view> transform(std::string_view chunk) const;

  std::vector<uint32_t> trie_;
  std::string normalized_;
};

}  // namespace mlm::text::hf
