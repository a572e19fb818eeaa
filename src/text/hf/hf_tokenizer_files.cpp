#include "mlm/text/hf/hf_tokenizer_files.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "mlm/text/sentencepiece/sentencepiece_json.h"
#include "mlm/text/wordpiece/wordpiece_files.h"
#include "mlm/util/atomic_file.h"

namespace mlm::text {
namespace fs = std::filesystem;

void write_hf_tokenizer(const Tokenizer& tokenizer, const std::string& dir, int64_t model_max_length) {
  const fs::path out(dir);
  if (const WordPiece* wordpiece = tokenizer.wordpiece()) {
    write_file_atomically(out / "tokenizer.json", wordpiece_tokenizer_json(*wordpiece).dump(2) + "\n");
    write_file_atomically(out / "vocab.txt", wordpiece_vocab_txt(*wordpiece));
  } else {
    const auto origin = tokenizer.model_path().empty() ? std::string("tokenizer model") : tokenizer.model_path();
    write_file_atomically(out / "tokenizer.json",
               sentencepiece_tokenizer_json(tokenizer.serialized_model(), tokenizer.vocab().ids, origin).dump(2) + "\n");
    // mlm-train (mlm-eval, mlm-fill, model.init_from users) reads the model itself back.
    write_file_atomically(out / "tokenizer.model", tokenizer.serialized_model());
  }
  // A fast tokenizer class that takes tokenizer.json as it is, for both kinds.
  write_file_atomically(out / "tokenizer_config.json", tokenizer_config_json(model_max_length).dump(2) + "\n");
  write_file_atomically(out / "special_tokens_map.json", special_tokens_map_json().dump(2) + "\n");
}

}  // namespace mlm::text
