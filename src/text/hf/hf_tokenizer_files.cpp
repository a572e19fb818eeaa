#include "mlm/text/hf/hf_tokenizer_files.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/sentencepiece/sentencepiece_json.h"
#include "mlm/text/wordpiece/wordpiece_files.h"
#include "mlm/util/atomic_file.h"

namespace mlm::text {
namespace fs = std::filesystem;
namespace {

// "cls_token": "<s>", ...: the roles of a pipeline that came without its config files.
nlohmann::json role_tokens(const hf::HfTokenizer& tokenizer) {
  const auto& r = tokenizer.special_tokens();
  const std::pair<const char*, std::optional<int32_t>> roles[] = {
      {"cls_token", r.cls}, {"sep_token", r.sep}, {"mask_token", r.mask}, {"pad_token", r.pad},
      {"unk_token", r.unk}, {"bos_token", r.bos}, {"eos_token", r.eos}};
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [key, id] : roles) {
    if (id) map[key] = tokenizer.id_to_piece(*id);
  }
  return map;
}

// An hf tokenizer's files go out as they came in, so that AutoTokenizer builds the same class
// with the same settings; the two config files are written from the roles when it had none.
void write_hf_files(const hf::HfTokenizer& tokenizer, const fs::path& out, int64_t model_max_length) {
  const auto& files = tokenizer.files();
  write_file_atomically(out / "tokenizer.json", files.tokenizer_json);
  std::string config = files.tokenizer_config_json;
  if (config.empty()) {
    auto json = role_tokens(tokenizer);
    json["tokenizer_class"] = "PreTrainedTokenizerFast";
    json["model_max_length"] = model_max_length;
    json["clean_up_tokenization_spaces"] = false;
    config = json.dump(2) + "\n";
  }
  write_file_atomically(out / "tokenizer_config.json", config);
  const std::string map =
      files.special_tokens_map_json.empty() ? role_tokens(tokenizer).dump(2) + "\n" : files.special_tokens_map_json;
  write_file_atomically(out / "special_tokens_map.json", map);
}

}  // namespace

void write_hf_tokenizer(const Tokenizer& tokenizer, const std::string& dir, int64_t model_max_length) {
  const fs::path out(dir);
  if (const hf::HfTokenizer* pipeline = tokenizer.hf()) {
    write_hf_files(*pipeline, out, model_max_length);
    return;
  }
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
