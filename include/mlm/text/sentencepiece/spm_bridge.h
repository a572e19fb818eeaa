#pragma once
// The C interface of libmlm_spm_bridge.so, the one place that links sentencepiece.
//
// Why a separate library, opened with dlmopen in a namespace of its own: Debian's
// libsentencepiece carries its own copy of protobuf (3.14) and exports those symbols, while
// LibTorch loads the system libprotobuf (3.21). In one global symbol scope, one of the two
// always binds to the other's copy and crashes at start-up or on the first model load.
// Isolated, sentencepiece sees only its protobuf and LibTorch only the system one. A plain C
// interface (bytes in, bytes out through sinks; memory never freed across it) keeps C++
// objects, allocations and exceptions from crossing the boundary.
#include <cstddef>
#include <cstdint>

extern "C" {

/// Receives bytes (a piece, decoded text, a serialized model) from the bridge.
typedef void (*MlmSpmByteSink)(void* context, const char* data, size_t size);
/// Receives encoded ids from the bridge.
typedef void (*MlmSpmIdSink)(void* context, const int32_t* ids, size_t size);
/// Yields the next training sentence; returns 0 when there is none left.
typedef int (*MlmSpmSentenceSource)(void* context, const char** data, size_t* size);

enum MlmSpmPieceFlags : unsigned {
  kMlmSpmControl = 1u,
  kMlmSpmUnknown = 2u,
  kMlmSpmUnused = 4u,
  kMlmSpmByte = 8u,
};

struct MlmSpmApi {
  int abi_version;  // kMlmSpmAbiVersion
  /// A processor from model proto bytes, or null with the reason in `error`.
  void* (*load)(const char* bytes, size_t size, char* error, size_t error_size);
  void (*release)(void* processor);
  int (*piece_size)(const void* processor);
  int (*unk_id)(const void* processor);
  int (*piece_to_id)(const void* processor, const char* piece, size_t size);
  void (*id_to_piece)(const void* processor, int id, MlmSpmByteSink sink, void* context);
  unsigned (*piece_flags)(const void* processor, int id);
  /// 1 on success, 0 with the reason in `error`.
  int (*encode)(const void* processor, const char* text, size_t size, MlmSpmIdSink sink,
                void* context, char* error, size_t error_size);
  int (*decode)(const void* processor, const int32_t* ids, size_t count, MlmSpmByteSink sink,
                void* context, char* error, size_t error_size);
  /// Trains with sentencepiece's "key=value" flags (arrays of `arg_count`), reading
  /// sentences from `source`; the model proto goes to `model_sink`. 1 on success.
  int (*train)(const char* const* keys, const char* const* values, size_t arg_count,
               MlmSpmSentenceSource source, void* source_context, unsigned seed,
               int min_log_level, MlmSpmByteSink model_sink, void* model_context, char* error,
               size_t error_size);
};

inline constexpr int kMlmSpmAbiVersion = 1;

/// The bridge's only exported symbol.
const MlmSpmApi* mlm_spm_bridge_api(void);
}
