#include "mlm/train/finetune/labelled_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "mlm/util/errors.h"

namespace mlm::train::finetune {
namespace {

using Json = nlohmann::json;

int64_t label_index(const config::TaskSection& task, const Json& value, const std::string& where) {
  const std::string name = value.is_string() ? value.get<std::string>() : value.dump();
  const auto it = std::find(task.labels.begin(), task.labels.end(), name);
  if (it == task.labels.end()) {
    std::string known;
    for (const auto& l : task.labels) known += (known.empty() ? "" : ", ") + l;
    throw DataError(where + ": unknown label '" + name + "' (task.labels: " + known + ")");
  }
  return it - task.labels.begin();
}

const Json& field(const Json& row, const std::string& name, const std::string& where) {
  const auto it = row.find(name);
  if (it == row.end() || it->is_null()) throw DataError(where + ": no field '" + name + "'");
  return *it;
}

std::string text_of(const Json& row, const std::string& name, const std::string& where) {
  const auto& value = field(row, name, where);
  if (!value.is_string()) throw DataError(where + ": field '" + name + "' is not a string");
  return value.get<std::string>();
}

// [a] or [a, b] pieces cut to `room` as tokenizers' LongestFirst: only the longer loses
// pieces when that is enough, else both keep half the room (the longer the odd one).
void truncate_longest_first(std::vector<int32_t>& a, std::vector<int32_t>& b, size_t room) {
  if (a.size() + b.size() <= room) return;
  auto& shorter = a.size() <= b.size() ? a : b;  // a on a tie, as tokenizers'
  auto& longer = a.size() <= b.size() ? b : a;
  size_t keep_short = shorter.size();
  size_t keep_long = keep_short > room ? keep_short : std::max(keep_short, room - keep_short);
  if (keep_short + keep_long > room) {
    keep_short = room / 2;
    keep_long = keep_short + room % 2;
  }
  shorter.resize(std::min(shorter.size(), keep_short));
  longer.resize(std::min(longer.size(), keep_long));
}

}  // namespace

std::vector<LabelledExample> read_labelled_split(const config::TaskSection& task, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DataError(path + ": cannot read the split (task file " + task.name + ")");
  const bool tagging = task.kind == config::TaskKind::token_classification;
  std::vector<LabelledExample> out;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    Json row;
    try {
      row = Json::parse(line);
    } catch (const Json::parse_error& e) {
      throw DataError(where + ": not a JSON object (" + std::string(e.what()) + ")");
    }
    if (!row.is_object()) throw DataError(where + ": not a JSON object");
    LabelledExample example;
    if (tagging) {
      const auto& words = field(row, task.tokens_field, where);
      const auto& tags = field(row, task.label_field, where);
      if (!words.is_array() || !tags.is_array()) {
        throw DataError(where + ": '" + task.tokens_field + "' and '" + task.label_field + "' must be lists");
      }
      if (words.size() != tags.size()) {
        throw DataError(where + ": " + std::to_string(words.size()) + " words but " + std::to_string(tags.size()) +
                        " tags");
      }
      for (const auto& w : words) {
        if (!w.is_string()) throw DataError(where + ": a word of '" + task.tokens_field + "' is not a string");
        example.words.push_back(w.get<std::string>());
      }
      for (const auto& t : tags) example.tags.push_back(label_index(task, t, where));
    } else {
      example.text = text_of(row, task.text_field, where);
      if (!task.text_pair_field.empty()) example.text_pair = text_of(row, task.text_pair_field, where);
      const auto& label = field(row, task.label_field, where);
      if (task.kind != config::TaskKind::regression) {
        example.label = label_index(task, label, where);
      } else if (!label.is_number() || !std::isfinite(label.get<double>())) {
        throw DataError(where + ": field '" + task.label_field + "' is not a number (" + label.dump() +
                        "): a regression task's target");
      } else {
        example.value = label.get<double>();
      }
    }
    out.push_back(std::move(example));
  }
  if (out.empty()) throw DataError(path + ": no examples (task " + task.name + ")");
  return out;
}

EncodedSplit encode_split(const config::TaskSection& task, const text::Tokenizer& tokenizer,
                          const std::vector<LabelledExample>& examples) {
  const auto& ids = tokenizer.vocab().ids;
  const auto room = static_cast<size_t>(task.max_seq_len);
  EncodedSplit out;
  std::vector<int32_t> a, b;
  for (const auto& example : examples) {
    EncodedExample e;
    auto append = [&](const std::vector<int32_t>& pieces, int64_t type) {
      for (const auto id : pieces) e.ids.push_back(id);
      e.ids.push_back(ids.sep);
      e.token_types.resize(e.ids.size(), type);
    };
    e.ids.push_back(ids.cls);
    if (task.kind != config::TaskKind::token_classification) {
      tokenizer.encode(example.text, a);
      b.clear();
      if (!task.text_pair_field.empty()) tokenizer.encode(example.text_pair, b);
      const size_t specials = task.text_pair_field.empty() ? 2 : 3;
      const size_t before = a.size() + b.size();
      truncate_longest_first(a, b, room - specials);
      out.truncated += a.size() + b.size() < before;
      e.token_types.push_back(0);
      append(a, 0);
      if (!task.text_pair_field.empty()) append(b, 1);
      if (task.kind == config::TaskKind::regression) {
        e.target = example.value;
      } else {
        e.labels = {example.label};
      }
    } else {
      e.labels.push_back(kIgnoredLabel);
      bool cut = false;
      for (size_t w = 0; w < example.words.size() && !cut; ++w) {
        tokenizer.encode(example.words[w], a);
        for (size_t k = 0; k < a.size(); ++k) {
          if (e.ids.size() + 1 >= room) {  // room for the final [SEP]
            cut = true;
            break;
          }
          e.ids.push_back(a[k]);
          e.labels.push_back(k == 0 ? example.tags[w] : kIgnoredLabel);
        }
      }
      out.truncated += cut;
      e.ids.push_back(ids.sep);
      e.labels.push_back(kIgnoredLabel);
      e.token_types.assign(e.ids.size(), 0);
    }
    out.examples.push_back(std::move(e));
  }
  return out;
}

}  // namespace mlm::train::finetune
