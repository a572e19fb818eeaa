#pragma once
// A file is what its name says: the first bytes of a corpus file are checked against the
// format and compression it was given before anything is read or written, so a misnamed
// file stops the run with one line instead of failing (or being read as garbage) hours in.
#include <string>

#include "mlm/text/corpus/corpus_files.h"

namespace mlm::text {

/// Throws DataError naming `key`, the file and what its bytes are when they do not match.
void check_signature(const CorpusFile& file, const std::string& key);

}  // namespace mlm::text
