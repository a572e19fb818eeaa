#pragma once
// The torchrun launch contract: which rank this process is, how many there are and where
// the rendezvous store lives, read from the environment variables that torchrun, Slurm
// scripts and Kubernetes operators set. No variables at all means a single process.
#include <functional>
#include <optional>
#include <string>

namespace mlm::dist {

struct DistEnv {
  int rank = 0;               // RANK: global rank, 0 .. world_size-1
  int world_size = 1;         // WORLD_SIZE: number of processes in the job
  int local_rank = 0;         // LOCAL_RANK: rank on this node (picks the GPU)
  int local_world_size = 1;   // LOCAL_WORLD_SIZE: processes on this node (optional; without
                              // it but with LOCAL_RANK, WORLD_SIZE is assumed)
  bool local_world_size_assumed = false;  // LOCAL_RANK set, LOCAL_WORLD_SIZE not
  std::string master_addr;    // MASTER_ADDR: host of the rendezvous store (rank 0's node)
  int master_port = 0;        // MASTER_PORT: its TCP port
  bool use_agent_store = false;  // TORCHELASTIC_USE_AGENT_STORE: the launcher hosts the store
  int restart_count = 0;      // TORCHELASTIC_RESTART_COUNT: keys of each restart kept apart

  bool is_distributed() const { return world_size > 1; }

  /// Reads the process environment (see from_lookup).
  static DistEnv from_environment();

  /// Parses the variables through `lookup` (returns nullopt for an unset variable).
  /// Neither RANK nor WORLD_SIZE set: a single process (any LOCAL_RANK is then an error).
  /// Otherwise RANK and WORLD_SIZE are both required, and MASTER_ADDR and MASTER_PORT too
  /// when WORLD_SIZE > 1; LOCAL_RANK is required when LOCAL_WORLD_SIZE > 1. A missing,
  /// malformed or out-of-range variable throws UsageError naming it and its value.
  static DistEnv from_lookup(
      const std::function<std::optional<std::string>(const std::string&)>& lookup);

  /// "rank 1/4 (local 1), store 10.0.0.1:29500": for log lines and error messages.
  std::string describe() const;
};

}  // namespace mlm::dist
