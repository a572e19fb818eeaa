#pragma once
// tokenizers' decoders (tokenizers/src/decoders/): pieces back to text, for decode only.
#include <memory>
#include <string>
#include <vector>

#include "json_reader.h"

namespace mlm::text::hf {

class Decoder {
 public:
  virtual ~Decoder() = default;
  /// Rewrites the pieces in place (decode_chain); the text is their concatenation.
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

/// Types: decoder_types() (components.h); DataError naming the key for another type.
std::unique_ptr<Decoder> make_decoder(const JsonReader& json);

}  // namespace mlm::text::hf
