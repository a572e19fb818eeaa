#include "mlm/train/finetune/split_cache.h"

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>

namespace mlm::train::finetune {
namespace {

// What decides a split's encoding, as one string: the file's identity and the task's keys.
std::string file_identity(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  const auto mtime = std::filesystem::last_write_time(path, error).time_since_epoch().count();
  return path + "|" + std::to_string(error ? 0 : size) + "|" + std::to_string(error ? 0 : mtime);
}

std::string split_cache_key(const config::TaskConfig& config, const text::Tokenizer& tokenizer) {
  const auto& t = config.task;
  std::string key = std::to_string(std::hash<std::string>{}(tokenizer.serialized_model())) + "|" +
                    std::to_string(tokenizer.size()) + "|" + std::string(config::to_string(t.kind)) + "|" +
                    t.text_field + "|" + t.text_pair_field + "|" + t.label_field + "|" + t.tokens_field + "|" +
                    std::to_string(t.max_seq_len) + "|" + std::to_string(config.finetune.max_train_examples);
  for (const auto& label : t.labels) key += "|" + label;
  for (const auto* path : {&t.train, &t.validation, &t.test})
    key += "#" + (path->empty() ? std::string() : file_identity(*path));
  return key;
}

}  // namespace

std::shared_ptr<const TaskSplits> cached_task_splits(const config::TaskConfig& task, const text::Tokenizer& tokenizer) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const TaskSplits>> cache;
  const auto key = split_cache_key(task, tokenizer);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto splits = std::make_shared<const TaskSplits>(load_task_splits(task, tokenizer));  // DataError: nothing kept
  const std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(splits)).first->second;
}

}  // namespace mlm::train::finetune
