#pragma once
// `mlm-data verify`: reads every byte of a prepared store (prepared_store.h) and names each
// damaged file: the manifest, each shard's token file and index (checksums, when the manifest
// records them, and structure: sizes, order, token ids below the vocabulary size) and each
// sequence table beside them (checksum when recorded, then every entry against the store).
// A run checks much less at start (it reads only what it needs), so this is the check to run
// after copying a store or when a run reports damage.
#include <cstdint>
#include <string>
#include <vector>

namespace mlm::data {

struct StoreVerification {
  std::string store;
  int64_t files = 0;   // files checked (shard token files, indexes, tables)
  int64_t bytes = 0;   // their bytes
  bool checksums = false;  // the manifest records checksums (else sizes and structure only)
  std::vector<std::string> damaged;  // one line per damaged file, naming it
  std::vector<std::string> notes;    // what is not damage but worth saying (a missing table)
};

/// Checks the store in `dir`. DataError when `dir` holds no manifest.json (not a complete
/// store); every other problem is a line of `damaged`.
StoreVerification verify_store(const std::string& dir);

}  // namespace mlm::data
