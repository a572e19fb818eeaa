#pragma once
// The on-disk life of a checkpoint directory, independent of what is in it:
// written under `.tmp-step_XXXXXXXX`, every file fsynced, a `DONE` manifest (size and CRC-32 of
// each file) written last, renamed to `step_XXXXXXXX`, the parent fsynced. A directory counts
// as a checkpoint only when DONE exists and every file matches it, so a crash, a full disk or
// a flipped byte can never be mistaken for a good checkpoint.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlm::train {

/// "step_00000100".
std::string checkpoint_dir_name(int64_t step);

/// Writes checkpoint `step` into `checkpoints_dir`: `write_files(tmp_dir)` creates the files,
/// then the manifest is written and the directory renamed into place (replacing an older
/// directory of the same step). Any failure removes the temporary directory, leaves existing
/// checkpoints untouched and throws CheckpointError. Returns the final path.
std::filesystem::path write_checkpoint_dir(
    const std::filesystem::path& checkpoints_dir, int64_t step,
    const std::function<void(const std::filesystem::path& tmp_dir)>& write_files);

/// Throws CheckpointError naming the offending file when `dir` is not a complete checkpoint:
/// no DONE, a listed file missing, of another size or with another CRC-32, or a file of
/// `required` not listed.
void verify_checkpoint_dir(const std::filesystem::path& dir,
                           const std::vector<std::string>& required);

/// The newest complete checkpoint, if any; newer incomplete or corrupt ones are skipped with a
/// warning naming the problem.
std::optional<std::filesystem::path> find_latest_checkpoint(
    const std::filesystem::path& checkpoints_dir,
                                               const std::vector<std::string>& required);

/// Removes all but the newest `keep_last` complete checkpoints (0 = keep all) and stale
/// temporary directories.
void prune_checkpoints(const std::filesystem::path& checkpoints_dir, int64_t keep_last,
                       const std::vector<std::string>& required);

/// The step encoded in a directory name "step_XXXXXXXX", or nullopt.
std::optional<int64_t> parse_checkpoint_step(const std::string& name);

/// Writes `bytes` to `path` (truncating) and fsyncs it; throws CheckpointError on failure.
void write_file_durably(const std::filesystem::path& path, const std::string& bytes);

/// Reads a whole file; throws CheckpointError naming it when it cannot be read.
std::string read_file_bytes(const std::filesystem::path& path);

}  // namespace mlm::train
