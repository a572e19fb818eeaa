// Parsing of the torchrun environment contract (see dist_env.h).
#include "mlm/dist/dist_env.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "mlm/util/errors.h"

namespace mlm::dist {
namespace {

using Lookup = std::function<std::optional<std::string>(const std::string&)>;

// Strict: the whole value is a base-10 integer in [min, max]; no sign games, no spaces.
int parse_int(const Lookup& lookup, const std::string& name, int min, int max) {
  const std::string value = lookup(name).value_or("");
  bool ok = !value.empty() && value.size() <= 10;
  for (char c : value) ok = ok && c >= '0' && c <= '9';
  long long parsed = ok ? std::stoll(value) : 0;
  if (!ok || parsed < min || parsed > max) {
    throw UsageError(fmt::format(
        "environment variable {}='{}' is not valid: expected an integer in [{}, {}] "
        "(set by torchrun / your launcher; see docs/DISTRIBUTED.md)",
        name, value, min, max));
  }
  return static_cast<int>(parsed);
}

void require(const Lookup& lookup, const std::string& name, const std::string& why) {
  if (!lookup(name)) {
    throw UsageError(fmt::format(
        "environment variable {} is not set, but {}: a multi-process launch needs RANK, "
        "WORLD_SIZE, MASTER_ADDR and MASTER_PORT (see docs/DISTRIBUTED.md)",
        name, why));
  }
}

bool parse_bool(const Lookup& lookup, const std::string& name) {
  const auto value = lookup(name);
  if (!value) return false;
  // torch.distributed compares with str(True); accept the usual spellings too.
  if (*value == "True" || *value == "true" || *value == "1") return true;
  if (value->empty() || *value == "False" || *value == "false" || *value == "0") return false;
  throw UsageError(fmt::format("environment variable {}='{}' is not valid: expected True or False",
                               name, *value));
}

}  // namespace

DistEnv DistEnv::from_lookup(const Lookup& lookup) {
  DistEnv env;
  const bool has_rank = lookup("RANK").has_value();
  const bool has_world = lookup("WORLD_SIZE").has_value();
  if (!has_rank && !has_world) {
    if (lookup("LOCAL_RANK")) {
      throw UsageError(
          "environment variable LOCAL_RANK is set but RANK and WORLD_SIZE are not: set all "
          "of RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (torchrun does), or none "
          "for a single process");
    }
    return env;  // a single process; MASTER_* alone (a cluster default) changes nothing
  }
  require(lookup, "RANK", "WORLD_SIZE is set");
  require(lookup, "WORLD_SIZE", "RANK is set");
  constexpr int kMaxInt = std::numeric_limits<int>::max();
  env.world_size = parse_int(lookup, "WORLD_SIZE", 1, 1 << 20);
  env.rank = parse_int(lookup, "RANK", 0, env.world_size - 1);
  if (lookup("LOCAL_WORLD_SIZE")) {
    env.local_world_size = parse_int(lookup, "LOCAL_WORLD_SIZE", 1, env.world_size);
  } else if (lookup("LOCAL_RANK")) {
    // torchrun sets both; a launcher that sets only LOCAL_RANK gets the largest node the job
    // can have, so any LOCAL_RANK of the job is accepted (threads: cores / WORLD_SIZE).
    env.local_world_size = env.world_size;
    env.local_world_size_assumed = true;
  }
  if (lookup("LOCAL_RANK")) {
    env.local_rank = parse_int(lookup, "LOCAL_RANK", 0, env.local_world_size - 1);
  } else if (env.local_world_size > 1) {
    require(lookup, "LOCAL_RANK", "LOCAL_WORLD_SIZE > 1 (it picks this process's GPU)");
  }
  env.use_agent_store = parse_bool(lookup, "TORCHELASTIC_USE_AGENT_STORE");
  if (lookup("TORCHELASTIC_RESTART_COUNT")) {
    env.restart_count = parse_int(lookup, "TORCHELASTIC_RESTART_COUNT", 0, kMaxInt);
  }
  if (env.world_size > 1) {
    require(lookup, "MASTER_ADDR", fmt::format("WORLD_SIZE is {}", env.world_size));
    require(lookup, "MASTER_PORT", fmt::format("WORLD_SIZE is {}", env.world_size));
    env.master_addr = *lookup("MASTER_ADDR");
    if (env.master_addr.empty()) {
      throw UsageError("environment variable MASTER_ADDR is empty: expected the host name or "
                       "address of rank 0's node");
    }
    env.master_port = parse_int(lookup, "MASTER_PORT", 1, 65535);
  }
  return env;
}

DistEnv DistEnv::from_environment() {
  return from_lookup([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

std::string DistEnv::describe() const {
  if (world_size == 1) return "single process";
  return fmt::format("rank {}/{} (local {}/{}), store {}:{}{}", rank, world_size, local_rank,
                     local_world_size, master_addr, master_port,
                     use_agent_store ? " (launcher's)" : "");
}

}  // namespace mlm::dist
