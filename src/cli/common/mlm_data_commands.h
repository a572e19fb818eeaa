#pragma once
// The commands behind `mlm-data prepare` and `mlm-data verify`: torch-free, so mlm-data links
// only the stages it uses (util, config, text, data, masking).
#include "mlm/config/run_config.h"
#include "mlm/data/store/store_writer.h"

namespace mlm::cli {

/// Prepares config.data.store (data/store_writer.h), or each data.sources store that has
/// files, with the run's tokenizer (trained first when tokenizer.model does not exist yet, as
/// every command does), saves the config's sequence tables and records their checksums, and
/// prints a one-line JSON summary per store on stdout. UsageError naming data.store when
/// there is nothing to prepare. Returns 0.
int prepare_command(const config::RunConfig& config, const data::PrepareOptions& options);

/// Checks each store the config names (data.store, or data.sources' stores) whole
/// (data/store_verify.h): a JSON line per store on stdout, and a DataError (exit 2) naming
/// the first damaged file when there is one (the others are warnings before it). UsageError
/// when the config names no store. Returns 0.
int verify_command(const config::RunConfig& config);

}  // namespace mlm::cli
