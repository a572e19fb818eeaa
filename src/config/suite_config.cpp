#include "mlm/config/suite_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "key_suggest.h"
#include "struct_list.h"
#include "mlm/util/errors.h"

namespace mlm::config {

namespace {

namespace fs = std::filesystem;

// "file:line" of a node (the file alone where yaml-cpp has no mark).
std::string suite_where(const std::string& origin, const YAML::Node& node) {
  const auto mark = node.Mark();
  return mark.is_null() ? origin : origin + ":" + std::to_string(mark.line + 1);
}

[[noreturn]] void suite_error(const std::string& origin, const YAML::Node& node, const std::string& key,
                              const std::string& what) {
  throw ConfigError(suite_where(origin, node) + ": " + key + " " + what, key);
}

// A seed drives torch::manual_seed (uint64) and is written back into a task's finetune.seed.
int64_t read_seed(const std::string& origin, const YAML::Node& node, const std::string& key) {
  try {
    const auto seed = node.as<int64_t>();
    if (seed < 0) suite_error(origin, node, key, "must be >= 0, got " + std::to_string(seed));
    return seed;
  } catch (const YAML::Exception&) {
    suite_error(origin, node, key, "expected an integer, got '" + (node.IsScalar() ? node.Scalar() : "a list") + "'");
  }
}

}  // namespace

std::vector<int64_t> first_seeds(int64_t count) {
  std::vector<int64_t> seeds;
  for (int64_t s = 1; s <= count; ++s) seeds.push_back(s);
  return seeds;
}

bool is_suite_file(const std::string& path) {
  try {
    const auto root = YAML::LoadFile(path);
    return root.IsMap() && root.size() > 0 && root.begin()->first.IsScalar() &&
           root.begin()->first.Scalar() == "suite";
  } catch (const YAML::Exception&) {
    return false;
  }
}

SuiteConfig load_suite_config(const std::string& path) {
  SuiteConfig c;
  c.origin = path;
  if (!fs::is_regular_file(path)) throw ConfigError(path + ": no such suite file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg);
  }
  if (!root.IsMap() || !root["suite"] || root.size() != 1) {
    throw ConfigError(path + ": expected one section, suite: (with name, seeds and tasks)", "suite");
  }
  const auto body = root["suite"];
  if (!body.IsMap()) suite_error(path, body, "suite", "must be a map of name, seeds and tasks");
  // finetune: is read with the tasks (task_config.h load_suite_tasks).
  const std::vector<std::string> keys = {"name", "seeds", "tasks", "finetune"};
  for (const auto& entry : body) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string message = suite_where(path, entry.first) + ": unknown key 'suite." + key + "'";
    if (const auto near = detail::closest_match(key, keys); !near.empty()) message += " (did you mean 'suite." + near + "'?)";
    throw ConfigError(message + "; the keys of suite are " + detail::joined(keys), "suite." + key);
  }

  const auto name = body["name"];
  if (!name || !name.IsScalar() || name.Scalar().empty()) suite_error(path, body, "suite.name", "is missing");
  c.name = name.Scalar();

  const auto seeds = body["seeds"];
  if (!seeds) suite_error(path, body, "suite.seeds", "is missing (a list of seeds, or how many: 1..N)");
  if (seeds.IsSequence()) {
    std::set<int64_t> seen;
    for (size_t i = 0; i < seeds.size(); ++i) {
      const std::string key = "suite.seeds[" + std::to_string(i) + "]";
      const auto seed = read_seed(path, seeds[i], key);
      if (!seen.insert(seed).second) suite_error(path, seeds[i], key, std::to_string(seed) + " is given twice");
      c.seeds.push_back(seed);
    }
  } else {
    const auto count = read_seed(path, seeds, "suite.seeds");
    c.seeds = first_seeds(count);
  }
  if (c.seeds.empty()) suite_error(path, seeds, "suite.seeds", "needs at least one seed");

  const auto tasks = body["tasks"];
  if (!tasks) suite_error(path, body, "suite.tasks", "is missing (a list of task files)");
  if (!tasks.IsSequence() || tasks.size() == 0)
    suite_error(path, tasks, "suite.tasks", "must be a non-empty list of task files");
  const auto dir = fs::path(path).parent_path();
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::string key = "suite.tasks[" + std::to_string(i) + "]";
    if (!tasks[i].IsScalar()) suite_error(path, tasks[i], key, "must be a task file's path");
    fs::path task = tasks[i].Scalar();
    if (task.is_relative()) task = dir / task;
    if (!fs::is_regular_file(task)) suite_error(path, tasks[i], key, "names no task file (" + task.string() + ")");
    c.tasks.push_back(task.lexically_normal().string());
  }
  return c;
}

}  // namespace mlm::config
