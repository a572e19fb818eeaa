// CSV and TSV with a header row, parsed by Apache Arrow's CSV reader (RFC 4180 quoting,
// doubled quotes, newlines inside quoted fields) from the decompressed bytes, so .csv.gz and
// .csv.zst read alike. Only the text column is converted, as strings whatever they look like.
// There is no row index: a resume parses the rows before its row again.
#include <arrow/csv/api.h>
#include <arrow/io/interfaces.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "byte_stream.h"
#include "mlm/text/corpus/document_reader.h"
#include "mlm/util/errors.h"
#include "table_batches.h"

namespace mlm::text {
namespace {

// Arrow's parse unit. Arrow cannot parse a row longer than its block: the reader then starts
// again with a block kBlockGrowth times larger (up to kMaxBlockBytes, past the cell bound) and
// skips the rows it already gave. Larger blocks cost memory for every file (4 MiB: ~230 MB peak
// RSS where 1 MiB gives ~100 MB, as Arrow holds several blocks in flight).
constexpr int32_t kBlockBytes = 1 << 20;
constexpr int32_t kBlockGrowth = 4;
constexpr int64_t kMaxBlockBytes = 2 * static_cast<int64_t>(kMaxJsonlRecordBytes);

char delimiter(const CorpusFile& file) { return file.format == FileFormat::tsv ? '\t' : ','; }

// Whether the bytes end inside a quoted field, and on which line that field opened. Arrow's
// reader takes everything after an unclosed quote as one field, silently; this follows the
// grammar it parses (a quote opens a field only at the field's start, "" inside stands for a
// quote) to refuse such a file by the line of its quote.
class QuoteTracker {
 public:
  explicit QuoteTracker(char delimiter) : delimiter_(delimiter) {}

  void scan(const char* data, size_t size) {
    const char* end = data + size;
    while (data < end) {
      if (quoted_) {  // skip to the closing quote, counting the lines inside the field
        const char* quote = static_cast<const char*>(std::memchr(data, '"', end - data));
        const char* stop = quote ? quote : end;
        line_ += std::count(data, stop, '\n');
        if (!quote) return;
        quoted_ = false;
        after_quote_ = true;
        data = quote + 1;
        continue;
      }
      const char c = *data++;
      if (c == '"' && (field_start_ || after_quote_)) {  // opens a field, or "" inside one
        if (field_start_) open_line_ = line_;
        quoted_ = true;
        field_start_ = after_quote_ = false;
        continue;
      }
      if (c == '\n') ++line_;
      after_quote_ = false;
      field_start_ = c == delimiter_ || c == '\n' || c == '\r';
    }
  }

  bool unclosed() const { return quoted_; }
  int64_t open_line() const { return open_line_; }

 private:
  char delimiter_;
  bool quoted_ = false;
  bool field_start_ = true;
  bool after_quote_ = false;
  int64_t line_ = 1;
  int64_t open_line_ = 0;
};

// Our decompressed bytes as an Arrow input stream. A DataError of the stream (damaged gzip
// or zstd) is kept and rethrown as it was, rather than as Arrow's copy of its text.
class ByteStreamInput final : public arrow::io::InputStream {
 public:
  explicit ByteStreamInput(const CorpusFile& file)
      : file_(file), stream_(open_byte_stream(file)),
        quotes_(delimiter(file)) {}

  arrow::Status Close() override {
    closed_ = true;
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }

  arrow::Result<int64_t> Read(int64_t size, void* out) override {
    int64_t done = 0;
    try {
      while (done < size) {
        const size_t n = stream_->read(static_cast<char*>(out) + done, static_cast<size_t>(size - done));
        if (n == 0) break;
        quotes_.scan(static_cast<const char*>(out) + done, n);
        done += static_cast<int64_t>(n);
      }
      if (done < size && quotes_.unclosed()) {
        throw DataError(file_.path + ":" + std::to_string(quotes_.open_line()) +
                        ": a quoted field opens on this line and never closes");
      }
    } catch (const DataError&) {
      error_ = std::current_exception();
      return arrow::Status::IOError("corpus stream");
    }
    position_ += done;
    return done;
  }

  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t size) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateResizableBuffer(size));
    ARROW_ASSIGN_OR_RAISE(const int64_t n, Read(size, buffer->mutable_data()));
    ARROW_RETURN_NOT_OK(buffer->Resize(n, /*shrink_to_fit=*/false));
    return std::shared_ptr<arrow::Buffer>(std::move(buffer));
  }

  int64_t input_offset() const { return stream_->input_offset(); }
  void rethrow_stream_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  CorpusFile file_;
  std::unique_ptr<ByteStream> stream_;
  QuoteTracker quotes_;
  int64_t position_ = 0;
  bool closed_ = false;
  std::exception_ptr error_;
};

class CsvBatches final : public TableBatches {
 public:
  CsvBatches(const CorpusFile& file, const std::string& column) : file_(file), column_(column) {
    open(kBlockBytes);
  }

  std::shared_ptr<arrow::Array> next() override {
    for (;;) {
      std::shared_ptr<arrow::RecordBatch> batch;
      const auto status = reader_->ReadNext(&batch);
      if (!status.ok()) {
        input_->rethrow_stream_error();
        if (row_longer_than_block(status) && block_bytes_ < kMaxBlockBytes) {
          open(std::min<int64_t>(kMaxBlockBytes, int64_t{block_bytes_} * kBlockGrowth));
          continue;
        }
        throw_arrow_error(file_, status);
      }
      if (!batch) return nullptr;
      const int64_t rows = batch->num_rows();
      if (skip_rows_ >= rows) {  // given before the reader started again
        skip_rows_ -= rows;
        continue;
      }
      auto column = batch->column(0)->Slice(skip_rows_);
      skip_rows_ = 0;
      rows_given_ += column->length();
      return column;
    }
  }

  int64_t first_row() const override { return 0; }
  int64_t input_offset() const override { return input_->input_offset(); }

 private:
  static bool row_longer_than_block(const arrow::Status& status) {
    return status.message().find("straddling object straddles two block boundaries") != std::string::npos;
  }

  // A reader from the file's start with blocks of `block_bytes`, skipping the rows given so far.
  void open(int64_t block_bytes) {
    block_bytes_ = static_cast<int32_t>(block_bytes);
    skip_rows_ = rows_given_;
    input_ = std::make_shared<ByteStreamInput>(file_);
    auto read = arrow::csv::ReadOptions::Defaults();
    read.use_threads = false;
    read.block_size = block_bytes_;
    auto parse = arrow::csv::ParseOptions::Defaults();
    parse.delimiter = delimiter(file_);
    parse.newlines_in_values = true;
    auto convert = arrow::csv::ConvertOptions::Defaults();
    convert.include_columns = {column_};
    convert.column_types[column_] = arrow::utf8();
    convert.strings_can_be_null = false;  // an empty cell is no document either way
    auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), input_, read,
                                                    parse, convert);
    if (!reader.ok()) {
      input_->rethrow_stream_error();
      if (row_longer_than_block(reader.status()) && block_bytes_ < kMaxBlockBytes) {
        return open(std::min<int64_t>(kMaxBlockBytes, block_bytes * kBlockGrowth));
      }
      refuse_missing_column(read, parse);
      throw_arrow_error(file_, reader.status());
    }
    reader_ = *std::move(reader);
  }

  // Arrow refuses a missing include_columns entry without naming the columns that are there:
  // read the header again, with nothing converted, to name them.
  void refuse_missing_column(const arrow::csv::ReadOptions& read,
                             const arrow::csv::ParseOptions& parse) const {
    auto header = arrow::csv::StreamingReader::Make(
        arrow::io::default_io_context(), std::make_shared<ByteStreamInput>(file_), read, parse,
        arrow::csv::ConvertOptions::Defaults());
    if (header.ok()) text_column_index(file_, *(*header)->schema(), column_);
  }

  CorpusFile file_;
  std::string column_;
  std::shared_ptr<ByteStreamInput> input_;
  std::shared_ptr<arrow::csv::StreamingReader> reader_;
  int32_t block_bytes_ = kBlockBytes;
  int64_t rows_given_ = 0;  // rows returned by next(), across restarts
  int64_t skip_rows_ = 0;   // rows the current reader still has to pass over
};

}  // namespace

std::unique_ptr<TableBatches> open_csv_batches(const CorpusFile& file, const std::string& column,
                                               int64_t) {
  return std::make_unique<CsvBatches>(file, column);
}

}  // namespace mlm::text
