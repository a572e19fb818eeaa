#pragma once
// The data.* section: the corpus (text files, a prepared store or a mixture) and how it is packed.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/enums.h"
#include "mlm/config/sections/phases.h"

namespace mlm::config {

/// One corpus of a weighted mixture (data.sources): text files read by the streaming path,
/// or a prepared store. Its share of the training sequences is weight / sum of the weights
/// (data.temperature and data.source_weights, which a phase may set, change the weights).
struct SourceConfig {
  std::vector<std::string> files;          // paths or globs (.txt, .jsonl, .csv, .tsv,
                                           // optionally .gz/.zst; .parquet, .arrow)
  double weight = 1.0;                     // relative share of the sequences, > 0
  std::string store;                       // prepared token store of this corpus (instead
                                           // of files)
  std::string name;                        // what data.source_weights and the per-source
                                           // eval rows call it ("" = its index)

  template <class V>
  void visit(V& v) {
    v("name", name);
    v("files", files);
    v("weight", weight);
    v("store", store);
  }
};

struct DataConfig {
  std::vector<std::string> train_files;    // paths or globs (.txt, .jsonl, .csv, .tsv,
                                           // optionally .gz/.zst; .parquet, .arrow)
  std::vector<std::string> valid_files;    // empty = hold out valid_fraction of train docs
  double valid_fraction = 0.01;            // held-out share by stable content hash
  DataFormat format = DataFormat::auto_detect;  // auto (by extension) | text | jsonl | csv |
                                           // tsv | parquet | arrow
  DocSeparator doc_separator = DocSeparator::blank_line;  // text: blank_line | line
  std::string text_field = "text";         // jsonl field / csv, tsv, parquet, arrow column
                                           // holding the document
  int64_t seq_len = 128;                   // tokens per sequence, [CLS] and [SEP] included
  bool cross_documents = true;             // pack across documents (RoBERTa FULL-SENTENCES)
  Packing packing = Packing::sentences;    // sequences end at sentence ends | token chunks
  int64_t shuffle_buffer = 10000;          // sequences in the shuffle buffer (1 = no shuffle)
  bool shuffle_files = true;               // new file order every epoch
  int64_t num_workers = 2;                 // background tokenization threads
  int64_t prefetch_sequences = 4096;       // bound of the queue between workers and trainer
  BadRecordPolicy on_bad_record = BadRecordPolicy::skip;  // skip (count, warn) | error
  std::string store;                       // prepared token store (mlm-data prepare writes it
                                           // from train_files/valid_files); when set, runs
                                           // read it instead of the text files
  std::vector<SourceConfig> sources;       // a weighted mixture of corpora (instead of
                                           // train_files): [{name, files, weight, store}]
  double temperature = 0;                  // alpha > 0: a source's weight is multiplied by
                                           // its size in tokens ^ alpha (XLM-R, mmBERT);
                                           // 0 = the weights as given
  KeySettings source_weights;              // {name: weight >= 0} replacing the named
                                           // sources' weights (0 = not drawn: a phase
                                           // leaves a source out, a later one adds it)

  template <class V>
  void visit(V& v) {
    v("train_files", train_files);
    v("valid_files", valid_files);
    v("valid_fraction", valid_fraction);
    v("format", format);
    v("doc_separator", doc_separator);
    v("text_field", text_field);
    v("seq_len", seq_len);
    v("cross_documents", cross_documents);
    v("packing", packing);
    v("shuffle_buffer", shuffle_buffer);
    v("shuffle_files", shuffle_files);
    v("num_workers", num_workers);
    v("prefetch_sequences", prefetch_sequences);
    v("on_bad_record", on_bad_record);
    v("store", store);
    v("sources", sources);
    v("temperature", temperature);
    v("source_weights", source_weights);
  }
};

}  // namespace mlm::config
