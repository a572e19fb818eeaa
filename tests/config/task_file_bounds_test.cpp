// A task file's sizes are bounded when it is read, before the model it fine-tunes is loaded:
// one ConfigError (exit 2) naming the file, the key and the value.
#include <gtest/gtest.h>

#include "config/config_test_util.h"
#include "mlm/config/task_config.h"
#include "mlm/util/errors.h"

namespace mlm::config::task_file_bounds {

using testing::TempDir;

std::string task_with(const std::string& labels, const std::string& max_seq_len) {
  return "task:\n  name: t\n  train: a.jsonl\n  validation: b.jsonl\n  labels: " + labels +
         "\n  max_seq_len: " + max_seq_len + "\n";
}

std::string labels_list(size_t count) {
  std::string out = "[";
  for (size_t k = 0; k < count; ++k) out += (k ? ",l" : "l") + std::to_string(k);
  return out + "]";
}

// The ConfigError's message for the task file `text`, which must name the file and be one line.
std::string error_of(const TempDir& dir, const std::string& text) {
  const auto path = dir.write("task.yaml", text);
  try {
    load_task_config(path);
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  return "no error";
}

TEST(TaskFileBounds, AnAbsurdMaxSeqLenIsRefusedWithItsValue) {
  TempDir dir;
  const auto message = error_of(dir, task_with("[x, y]", "1000000000000"));
  EXPECT_NE(message.find("task.max_seq_len 1000000000000"), std::string::npos) << message;
  // The longest real position tables load.
  EXPECT_EQ(load_task_config(dir.write("ok.yaml", task_with("[x, y]", "8192"))).task.max_seq_len, 8192);
}

TEST(TaskFileBounds, AnAbsurdLabelCountIsRefusedWithTheCount) {
  TempDir dir;
  const auto message = error_of(dir, task_with(labels_list(65537), "128"));
  EXPECT_NE(message.find("task.labels has 65537 labels"), std::string::npos) << message;
  // A large but real label set (thousands of intents or categories) loads.
  EXPECT_EQ(load_task_config(dir.write("ok.yaml", task_with(labels_list(5000), "128"))).task.labels.size(), 5000u);
}

}  // namespace mlm::config::task_file_bounds
