#include "mlm/train/merge/merge_compat.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <map>

#include "mlm/text/tokenizer.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "mlm/util/read_file.h"

namespace fs = std::filesystem;

namespace mlm::train::merge {
namespace {

nlohmann::json read_config_json(const NetworkFiles& input) {
  const auto path = input.dir / "config.json";
  const auto text = read_file(path);
  auto json = nlohmann::json::parse(text.value_or(""), nullptr, /*allow_exceptions=*/false);
  if (!text || !json.is_object())
    throw UsageError(fmt::format("model {}: {} is missing or not a JSON object", input.label, path.string()));
  return json;
}

// Keys that say how a file was written, not what the model is.
bool is_provenance(const std::string& key) {
  return key == "_name_or_path" || key == "transformers_version" || key == "torch_dtype" || key == "dtype";
}

void require_same_config(const NetworkFiles& reference, const NetworkFiles& other) {
  const auto a = read_config_json(reference), b = read_config_json(other);
  std::map<std::string, int> keys;
  for (const auto& [k, v] : a.items()) keys[k] = 1;
  for (const auto& [k, v] : b.items()) keys[k] = 1;
  for (const auto& [key, unused] : keys) {
    if (is_provenance(key)) continue;
    const auto va = a.value(key, nlohmann::json()), vb = b.value(key, nlohmann::json());
    if (va == vb) continue;
    const bool decisive = key == "architectures" || key == "model_type" || va.is_number_integer() ||
                          vb.is_number_integer();
    const auto what = fmt::format("config.json {} is {} but {} in model {}", key, vb.dump(), va.dump(), reference.label);
    if (decisive) throw UsageError(fmt::format("model {}: {}", other.label, what));
    log::warn("merge", "model {}: {} (kept from the reference)", other.label, what);
  }
}

// The tokenizer as an export holds it, in the order the model readers look for it.
text::Tokenizer directory_tokenizer(const NetworkFiles& input) {
  for (const char* name : {"tokenizer.model", "spiece.model", "sentencepiece.model", "spm.model", "tokenizer.json", "vocab.txt"}) {
    if (fs::exists(input.dir / name)) {
      try {
        return text::Tokenizer::load((input.dir / name).string());
      } catch (const DataError& e) {
        throw UsageError(fmt::format("model {}: {}", input.label, e.what()));
      }
    }
  }
  throw UsageError(fmt::format("model {}: {} holds no tokenizer (tokenizer.json, tokenizer.model or vocab.txt)",
                               input.label, input.dir.string()));
}

// The same pieces at the same ids (whichever files hold them: a sentencepiece model or its
// tokenizer.json), added tokens included.
void require_same_tokenizer(const NetworkFiles& reference, const NetworkFiles& other) {
  const auto a = directory_tokenizer(reference), b = directory_tokenizer(other);
  if (a.size() != b.size())
    throw UsageError(fmt::format("model {}: its tokenizer has {} pieces but model {}'s has {}", other.label, b.size(),
                                 reference.label, a.size()));
  for (int32_t id = 0; id < static_cast<int32_t>(a.size()); ++id)
    if (a.id_to_piece(id) != b.id_to_piece(id))
      throw UsageError(fmt::format("model {}: another tokenizer than model {}'s: id {} is '{}', not '{}'", other.label,
                                   reference.label, id, b.id_to_piece(id), a.id_to_piece(id)));
}

std::string shape_text(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

void require_same_tensors(const NetworkFiles& reference, const NetworkFiles& other) {
  std::map<std::string, const model::SafetensorsFile::Info*> theirs;
  for (const auto& info : other.weights.tensors()) theirs[info.name] = &info;
  for (const auto& info : reference.weights.tensors()) {
    const auto it = theirs.find(info.name);
    if (it == theirs.end())
      throw UsageError(fmt::format("model {}: {} lacks tensor {} that model {} has", other.label,
                                   other.weights.path(), info.name, reference.label));
    if (it->second->shape != info.shape || it->second->dtype != info.dtype)
      throw UsageError(fmt::format("model {}: tensor {} is {} {} but {} {} in model {}", other.label, info.name,
                                   c10::toString(it->second->dtype), shape_text(it->second->shape),
                                   c10::toString(info.dtype), shape_text(info.shape), reference.label));
    theirs.erase(it);
  }
  if (!theirs.empty())
    throw UsageError(fmt::format("model {}: tensor {} is not in model {}", other.label, theirs.begin()->first,
                                 reference.label));
}

}  // namespace

void require_mergeable(const NetworkFiles& reference, const NetworkFiles& other) {
  require_same_config(reference, other);
  require_same_tokenizer(reference, other);
  require_same_tensors(reference, other);
}

}  // namespace mlm::train::merge
