// Parquet through Apache Arrow's reader: only the text column is decoded, a few thousand rows
// at a time through a buffered stream, so memory stays within a batch and a page whatever the
// row group size. A resume starts at its row's row group (from the footer's row counts).
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include "mlm/util/errors.h"
#include "table_batches.h"

namespace mlm::text {
namespace {

constexpr int64_t kBatchRows = 4096;
constexpr int64_t kStreamBuffer = 1 << 20;

class ParquetBatches final : public TableBatches {
 public:
  // Arrow's Parquet reader throws ParquetException where its footer or metadata is damaged.
  ParquetBatches(const CorpusFile& file, const std::string& column, int64_t row) try
      : file_(file) {
    parquet::ReaderProperties properties = parquet::default_reader_properties();
    properties.enable_buffered_stream();
    properties.set_buffer_size(kStreamBuffer);
    parquet::ArrowReaderProperties arrow_properties;
    arrow_properties.set_batch_size(kBatchRows);
    arrow_properties.set_use_threads(false);
    arrow_properties.set_pre_buffer(false);
    parquet::arrow::FileReaderBuilder builder;
    check(builder.OpenFile(file.path, /*memory_map=*/false, properties));
    builder.properties(arrow_properties);
    reader_ = value_or_throw(file, builder.Build());
    std::shared_ptr<arrow::Schema> schema;
    check(reader_->GetSchema(&schema));
    const int field = text_column_index(file, *schema, column);
    const int leaf = reader_->manifest().schema_fields[field].column_index;

    const auto& metadata = *reader_->parquet_reader()->metadata();
    total_rows_ = metadata.num_rows();
    file_bytes_ = value_or_throw(file, arrow::io::ReadableFile::Open(file.path))->GetSize().ValueOr(0);
    std::vector<int> row_groups;
    for (int g = 0; g < metadata.num_row_groups(); ++g) {
      const int64_t rows = metadata.RowGroup(g)->num_rows();
      if (row_groups.empty() && first_row_ + rows <= row) {
        first_row_ += rows;  // a row group wholly before the resume row: not read
        continue;
      }
      row_groups.push_back(g);
    }
    rows_read_ = first_row_;
    if (!row_groups.empty()) {
      batches_ = value_or_throw(file, reader_->GetRecordBatchReader(row_groups, {leaf}));
    }
  } catch (const parquet::ParquetException& e) {
    throw_arrow_error(file, arrow::Status::IOError(e.what()));
  }

  std::shared_ptr<arrow::Array> next() override {
    if (!batches_) return nullptr;
    std::shared_ptr<arrow::RecordBatch> batch;
    try {
      check(batches_->ReadNext(&batch));
    } catch (const parquet::ParquetException& e) {
      throw_arrow_error(file_, arrow::Status::IOError(e.what()));
    }
    if (!batch) return nullptr;
    rows_read_ += batch->num_rows();
    return batch->column(0);
  }

  int64_t first_row() const override { return first_row_; }
  int64_t input_offset() const override {
    return total_rows_ > 0 ? file_bytes_ * rows_read_ / total_rows_ : file_bytes_;
  }

 private:
  void check(const arrow::Status& status) const {
    if (!status.ok()) throw_arrow_error(file_, status);
  }

  CorpusFile file_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::unique_ptr<arrow::RecordBatchReader> batches_;  // null: nothing from the resume row on
  int64_t first_row_ = 0;
  int64_t rows_read_ = 0;
  int64_t total_rows_ = 0;
  int64_t file_bytes_ = 0;
};

}  // namespace

std::unique_ptr<TableBatches> open_parquet_batches(const CorpusFile& file, const std::string& column,
                                                   int64_t row) {
  return std::make_unique<ParquetBatches>(file, column, row);
}

}  // namespace mlm::text
