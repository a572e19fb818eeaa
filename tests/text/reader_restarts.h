#pragma once
// A DocumentReader opened at a document's start, or at its predecessor's end, reads the
// same documents from there on as one pass over the whole file did.
#include <gtest/gtest.h>

#include <vector>

#include "mlm/text/corpus/document_reader.h"

namespace mlm::testing {

/// `all`: every document of `file`, read from its start; k >= 1.
inline void expect_restart_at(const text::CorpusFile& file, const std::vector<text::Document>& all,
                              size_t k) {
  SCOPED_TRACE(file.path + " from document " + std::to_string(k));
  text::DocumentReader from_start(file, {}, all[k].offset, all[k].line);
  text::DocumentReader from_end(file, {}, all[k - 1].end_offset, all[k - 1].end_line);
  text::Document a, b;
  for (size_t i = k; i < all.size(); ++i) {
    ASSERT_TRUE(from_start.next(a));
    ASSERT_TRUE(from_end.next(b));
    ASSERT_EQ(a.text, all[i].text);
    ASSERT_EQ(b.text, all[i].text);
    ASSERT_EQ(a.offset, all[i].offset);
    ASSERT_EQ(a.line, all[i].line);
  }
  EXPECT_FALSE(from_start.next(a));
}

}  // namespace mlm::testing
