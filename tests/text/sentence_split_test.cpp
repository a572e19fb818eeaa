#include "mlm/text/corpus/sentence_split.h"

#include <gtest/gtest.h>

namespace mlm::text::sentence_split_test {  // named: the tests share one unity build

using Lines = std::vector<std::string_view>;

TEST(SentenceSplit, NonBlankLinesAreTheSentences) {
  EXPECT_EQ(split_sentences("One.\nTwo two.\r\n\n  \nThree"), (Lines{"One.", "Two two.", "Three"}));
  EXPECT_EQ(split_sentences("single line, no newline"), Lines{"single line, no newline"});
  EXPECT_EQ(split_sentences("  indented stays as is \n"), Lines{"  indented stays as is "});
}

TEST(SentenceSplit, BlankTextHasNoSentence) {
  EXPECT_EQ(split_sentences(""), Lines{});
  EXPECT_EQ(split_sentences("\n \t\n\r\n"), Lines{});
}

}  // namespace mlm::text::sentence_split_test
