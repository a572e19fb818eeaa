// One document per row of a table's text column: nulls and blank cells are no documents, a
// cell over the record bound is a bad record. A position is a row index.
#include <optional>

#include "document_source.h"
#include "table_batches.h"

namespace mlm::text {
namespace {

std::optional<std::string_view> cell_text(const arrow::Array& column, int64_t i) {
  if (column.IsNull(i)) return std::nullopt;
  switch (column.type_id()) {
    case arrow::Type::STRING:
      return static_cast<const arrow::StringArray&>(column).GetView(i);
    case arrow::Type::LARGE_STRING:
      return static_cast<const arrow::LargeStringArray&>(column).GetView(i);
    case arrow::Type::STRING_VIEW:
      return static_cast<const arrow::StringViewArray&>(column).GetView(i);
    case arrow::Type::DICTIONARY: {
      const auto& dictionary = static_cast<const arrow::DictionaryArray&>(column);
      return cell_text(*dictionary.dictionary(), dictionary.GetValueIndex(i));
    }
    default:
      return std::nullopt;  // is_text_type() refused it when the file was opened
  }
}

bool all_whitespace(std::string_view text) {
  return text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

class TableDocuments final : public DocumentSource {
 public:
  TableDocuments(const CorpusFile& file, const ReadOptions& options, int64_t row)
      : DocumentSource(file, options),
        batches_(open_table_batches(file, options.text_field, row)),
        row_(batches_->first_row()), resume_row_(row) {}

  bool next(Document& doc) override {
    for (;;) {
      if (!column_ || index_ == column_->length()) {
        column_ = batches_->next();
        index_ = 0;
        if (!column_) return false;
        if (row_ + column_->length() <= resume_row_) {  // wholly before the resume row
          row_ += column_->length();
          index_ = column_->length();
        } else if (row_ < resume_row_) {
          index_ = resume_row_ - row_;
          row_ = resume_row_;
        }
        continue;
      }
      const int64_t row = row_++;
      const auto text = cell_text(*column_, index_++);
      if (!text || all_whitespace(*text)) continue;
      if (text->size() > kMaxJsonlRecordBytes) {
        bad_record(row + 1, "a cell longer than " + std::to_string(kMaxJsonlRecordBytes >> 20) +
                                " MiB");
        continue;
      }
      doc.text.assign(*text);
      doc.offset = row;
      doc.line = row + 1;
      doc.end_offset = row + 1;
      doc.end_line = row + 2;
      if (finish(doc)) return true;
    }
  }

  int64_t input_offset() const override { return batches_->input_offset(); }

 private:
  std::unique_ptr<TableBatches> batches_;
  std::shared_ptr<arrow::Array> column_;
  int64_t index_ = 0;  // next cell of column_
  int64_t row_ = 0;    // the row of that cell
  int64_t resume_row_ = 0;
};

}  // namespace

std::unique_ptr<DocumentSource> open_table_documents(const CorpusFile& file,
                                                     const ReadOptions& options, int64_t row) {
  return std::make_unique<TableDocuments>(file, options, row);
}

}  // namespace mlm::text
