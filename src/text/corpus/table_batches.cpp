#include "table_batches.h"

#include "mlm/util/errors.h"

namespace mlm::text {

std::unique_ptr<TableBatches> open_parquet_batches(const CorpusFile&, const std::string&, int64_t);
std::unique_ptr<TableBatches> open_arrow_ipc_batches(const CorpusFile&, const std::string&, int64_t);
std::unique_ptr<TableBatches> open_csv_batches(const CorpusFile&, const std::string&, int64_t);

std::unique_ptr<TableBatches> open_table_batches(const CorpusFile& file, const std::string& column,
                                                 int64_t row) {
  switch (file.format) {
    case FileFormat::parquet: return open_parquet_batches(file, column, row);
    case FileFormat::arrow: return open_arrow_ipc_batches(file, column, row);
    case FileFormat::csv:
    case FileFormat::tsv: return open_csv_batches(file, column, row);
    case FileFormat::text:
    case FileFormat::jsonl: break;
  }
  throw DataError("'" + file.path + "' is not a table");
}

bool is_text_type(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
      return true;
    case arrow::Type::DICTIONARY:
      return is_text_type(*static_cast<const arrow::DictionaryType&>(type).value_type());
    default:
      return false;
  }
}

int text_column_index(const CorpusFile& file, const arrow::Schema& schema, const std::string& column) {
  const int index = schema.GetFieldIndex(column);
  if (index < 0) {
    std::string names;
    for (const auto& field : schema.fields()) names += (names.empty() ? "" : ", ") + field->name();
    throw DataError("'" + file.path + "': no column \"" + column + "\" (data.text_field); its " +
                    "columns: " + names);
  }
  const auto& type = *schema.field(index)->type();
  if (!is_text_type(type)) {
    throw DataError("'" + file.path + "': column \"" + column + "\" holds " + type.ToString() +
                    ", not strings (data.text_field)");
  }
  return index;
}

void throw_arrow_error(const CorpusFile& file, const arrow::Status& status) {
  std::string message = status.message();
  if (const auto newline = message.find('\n'); newline != std::string::npos) message.resize(newline);
  if (message.size() > 300) message = message.substr(0, 300) + "...";
  throw DataError("'" + file.path + "': cannot read it as " + format_name(file.format) + ": " +
                  message);
}

}  // namespace mlm::text
