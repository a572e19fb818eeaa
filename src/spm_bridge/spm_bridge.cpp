// libmlm_spm_bridge.so: sentencepiece behind the C interface of mlm/text/sentencepiece/spm_bridge.h.
// Built as its own shared library and opened with dlopen (see that header for why).
#include "mlm/text/sentencepiece/spm_bridge.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace sentencepiece::logging {
void SetMinLogLevel(int level);  // exported by libsentencepiece, not declared in its headers
}

namespace {

using sentencepiece::SentencePieceProcessor;

const SentencePieceProcessor& processor_of(const void* p) {
  return *static_cast<const SentencePieceProcessor*>(p);
}

void set_error(char* error, size_t size, const std::string& message) {
  if (!error || size == 0) return;
  const size_t n = std::min(size - 1, message.size());
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

class CallbackSentenceIterator : public sentencepiece::SentenceIterator {
 public:
  CallbackSentenceIterator(MlmSpmSentenceSource source, void* context)
      : source_(source), context_(context) {
    Next();
  }
  bool done() const override { return done_; }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override { return {}; }
  void Next() override {
    const char* data = nullptr;
    size_t size = 0;
    done_ = source_(context_, &data, &size) == 0;
    if (!done_) value_.assign(data, size);
  }

 private:
  MlmSpmSentenceSource source_;
  void* context_;
  std::string value_;
  bool done_ = false;
};

void* load(const char* bytes, size_t size, char* error, size_t error_size) {
  auto processor = std::make_unique<SentencePieceProcessor>();
  const auto status = processor->LoadFromSerializedProto(std::string_view(bytes, size));
  if (!status.ok()) {
    set_error(error, error_size, status.ToString());
    return nullptr;
  }
  return processor.release();
}

void release(void* p) { delete static_cast<SentencePieceProcessor*>(p); }
int piece_size(const void* p) { return processor_of(p).GetPieceSize(); }
int unk_id(const void* p) { return processor_of(p).unk_id(); }

int piece_to_id(const void* p, const char* piece, size_t size) {
  return processor_of(p).PieceToId(std::string_view(piece, size));
}

void id_to_piece(const void* p, int id, MlmSpmByteSink sink, void* context) {
  const std::string& piece = processor_of(p).IdToPiece(id);
  sink(context, piece.data(), piece.size());
}

unsigned piece_flags(const void* p, int id) {
  const auto& sp = processor_of(p);
  return (sp.IsControl(id) ? kMlmSpmControl : 0u) | (sp.IsUnknown(id) ? kMlmSpmUnknown : 0u) |
         (sp.IsUnused(id) ? kMlmSpmUnused : 0u) | (sp.IsByte(id) ? kMlmSpmByte : 0u);
}

int encode(const void* p, const char* text, size_t size, MlmSpmIdSink sink, void* context,
           char* error, size_t error_size) {
  thread_local std::vector<int> ids;  // reused: encoding runs per document on worker threads
  const auto status = processor_of(p).Encode(std::string_view(text, size), &ids);
  if (!status.ok()) {
    set_error(error, error_size, status.ToString());
    return 0;
  }
  static_assert(sizeof(int) == sizeof(int32_t));
  sink(context, reinterpret_cast<const int32_t*>(ids.data()), ids.size());
  return 1;
}

int decode(const void* p, const int32_t* ids, size_t count, MlmSpmByteSink sink, void* context,
           char* error, size_t error_size) {
  std::string text;
  const std::vector<int> pieces(ids, ids + count);
  const auto status = processor_of(p).Decode(pieces, &text);
  if (!status.ok()) {
    set_error(error, error_size, status.ToString());
    return 0;
  }
  sink(context, text.data(), text.size());
  return 1;
}

int train(const char* const* keys, const char* const* values, size_t arg_count,
          MlmSpmSentenceSource source, void* source_context, unsigned seed, int min_log_level,
          MlmSpmByteSink model_sink, void* model_context, char* error, size_t error_size) {
  std::unordered_map<std::string, std::string> args;
  for (size_t i = 0; i < arg_count; ++i) args[keys[i]] = values[i];
  sentencepiece::SetRandomGeneratorSeed(seed);
  sentencepiece::logging::SetMinLogLevel(min_log_level);
  CallbackSentenceIterator sentences(source, source_context);
  std::string model_proto;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &sentences, &model_proto);
  if (!status.ok()) {
    set_error(error, error_size, status.ToString());
    return 0;
  }
  model_sink(model_context, model_proto.data(), model_proto.size());
  return 1;
}

const MlmSpmApi kApi = {kMlmSpmAbiVersion, load,   release, piece_size, unk_id, piece_to_id,
                        id_to_piece,       piece_flags, encode,  decode,     train};

}  // namespace

extern "C" __attribute__((visibility("default"))) const MlmSpmApi* mlm_spm_bridge_api(void) {
  return &kApi;
}
