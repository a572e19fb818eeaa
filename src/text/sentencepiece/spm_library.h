#pragma once
// Opens libmlm_spm_bridge.so once per process and hands out its C interface.
#include "mlm/text/sentencepiece/spm_bridge.h"

namespace mlm::text {

/// The bridge's interface; the first call opens the library. DataError (naming every path
/// tried) when it cannot be found or opened. Looked up in: $MLM_SPM_BRIDGE, the executable's
/// directory and its parent, then the build directory it was built in.
const MlmSpmApi& spm_api();

}  // namespace mlm::text
