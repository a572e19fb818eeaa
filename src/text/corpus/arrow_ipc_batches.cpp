// Arrow IPC, the files datasets' save_to_disk writes (the stream format) and the random-access
// file format (ARROW1), read batch by batch with only the text column decoded. Neither has a
// row index: a resume reads the batches before its row without looking at their text.
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>

#include "mlm/util/errors.h"
#include "table_batches.h"

namespace mlm::text {
namespace {

class ArrowIpcBatches final : public TableBatches {
 public:
  ArrowIpcBatches(const CorpusFile& file, const std::string& column) : file_(file) {
    input_ = value_or_throw(file, arrow::io::ReadableFile::Open(file.path));
    char magic[6] = {};
    const int64_t got = value_or_throw(file, input_->ReadAt(0, sizeof magic, magic));
    std::shared_ptr<arrow::Schema> schema;
    if (got == sizeof magic && std::string_view(magic, sizeof magic) == "ARROW1") {
      file_reader_ = value_or_throw(file, arrow::ipc::RecordBatchFileReader::Open(input_));
      schema = file_reader_->schema();
    } else {
      // The stream reader reads from the current position, which ReadAt leaves undefined.
      if (const auto seek = input_->Seek(0); !seek.ok()) throw_arrow_error(file, seek);
      stream_reader_ = value_or_throw(file, arrow::ipc::RecordBatchStreamReader::Open(input_));
      schema = stream_reader_->schema();
    }
    column_ = text_column_index(file, *schema, column);
  }

  std::shared_ptr<arrow::Array> next() override {
    std::shared_ptr<arrow::RecordBatch> batch;
    if (file_reader_) {
      if (next_batch_ == file_reader_->num_record_batches()) return nullptr;
      batch = value_or_throw(file_, file_reader_->ReadRecordBatch(next_batch_++));
    } else {
      const auto status = stream_reader_->ReadNext(&batch);
      if (!status.ok()) throw_arrow_error(file_, status);
      if (!batch) return nullptr;
    }
    return batch->column(column_);
  }

  int64_t first_row() const override { return 0; }
  int64_t input_offset() const override { return input_->Tell().ValueOr(0); }

 private:
  CorpusFile file_;
  std::shared_ptr<arrow::io::ReadableFile> input_;
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> file_reader_;
  std::shared_ptr<arrow::ipc::RecordBatchStreamReader> stream_reader_;
  int next_batch_ = 0;
  int column_ = -1;
};

}  // namespace

std::unique_ptr<TableBatches> open_arrow_ipc_batches(const CorpusFile& file,
                                                     const std::string& column, int64_t) {
  return std::make_unique<ArrowIpcBatches>(file, column);
}

}  // namespace mlm::text
