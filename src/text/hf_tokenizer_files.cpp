#include "mlm/text/hf_tokenizer_files.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "mlm/util/errors.h"

namespace mlm::text {
namespace fs = std::filesystem;
namespace {

void write_file(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  std::error_code ec;
  if (out) fs::rename(tmp, path, ec);
  if (!out || ec) throw DataError(path.string() + ": cannot write");
}

}  // namespace

void write_hf_tokenizer(const Tokenizer& tokenizer, const std::string& dir, int64_t model_max_length) {
  const fs::path out(dir);
  const auto& ids = tokenizer.vocab().ids;
  nlohmann::json special = {{"unk_token", "[UNK]"}, {"sep_token", "[SEP]"}, {"pad_token", "[PAD]"},
                            {"cls_token", "[CLS]"}, {"mask_token", "[MASK]"}};
  write_file(out / "special_tokens_map.json", special.dump(2) + "\n");
  nlohmann::json config = special;
  config["tokenizer_class"] = "AlbertTokenizer";
  config["do_lower_case"] = false;
  config["remove_space"] = true;
  config["keep_accents"] = true;
  config["model_max_length"] = model_max_length;
  config["special_token_ids"] = {{"pad", ids.pad}, {"unk", ids.unk}, {"cls", ids.cls}, {"sep", ids.sep}, {"mask", ids.mask}};
  write_file(out / "tokenizer_config.json", config.dump(2) + "\n");
  // mlm-train reads tokenizer.model back; AlbertTokenizer reads spiece.model.
  for (const char* name : {"tokenizer.model", "spiece.model"}) write_file(out / name, tokenizer.serialized_model());
}

}  // namespace mlm::text
