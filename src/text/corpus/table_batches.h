#pragma once
// The text column of a table file as a sequence of Arrow arrays, one per record batch: what
// the Parquet, Arrow IPC and CSV/TSV readers (Apache Arrow's own) have in common. Arrow's
// headers stay behind this file and table_*.cpp.
#include <arrow/api.h>

#include <memory>
#include <string>

#include "mlm/text/corpus/corpus_files.h"

namespace mlm::text {

class TableBatches {
 public:
  virtual ~TableBatches() = default;
  /// The text column of the next record batch; null at the end of the file.
  virtual std::shared_ptr<arrow::Array> next() = 0;
  /// The row the first array returned starts at: the resume row or an earlier one (the start
  /// of its Parquet row group, the start of the file for formats without an index).
  virtual int64_t first_row() const = 0;
  /// Bytes of the file consumed so far, for progress (an estimate where Arrow hides it).
  virtual int64_t input_offset() const = 0;
};

/// Opens the column `column` of `file` for reading from `row` on. Throws DataError naming
/// the file: the column missing (with the columns there), not a string column, a damaged
/// file.
std::unique_ptr<TableBatches> open_table_batches(const CorpusFile& file, const std::string& column,
                                                 int64_t row);

/// A string, large_string or string_view column, or a dictionary of one.
bool is_text_type(const arrow::DataType& type);

/// The index of the text column `column` in `schema`. Throws DataError naming the file and
/// data.text_field when it is missing (listing the columns there) or holds no strings.
int text_column_index(const CorpusFile& file, const arrow::Schema& schema, const std::string& column);

/// Arrow's status as one line of a DataError naming `file`.
[[noreturn]] void throw_arrow_error(const CorpusFile& file, const arrow::Status& status);

/// The value of `result`, or throw_arrow_error.
template <class T>
T value_or_throw(const CorpusFile& file, arrow::Result<T> result) {
  if (!result.ok()) throw_arrow_error(file, result.status());
  return std::move(result).ValueUnsafe();
}

}  // namespace mlm::text
