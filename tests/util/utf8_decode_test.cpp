#include "mlm/util/utf8_decode.h"

#include <gtest/gtest.h>

#include <string>

namespace mlm {
namespace {

TEST(Utf8Decode, DecodesOneToFourByteCharacters) {
  struct Case {
    std::string bytes;
    char32_t code_point;
  };
  const Case cases[] = {
      {"A", U'A'},          {std::string(1, '\0'), 0},  {"\x7F", 0x7F},
      {"\xC2\x80", 0x80},   {"\xC3\xA9", 0xE9},         {"\xDF\xBF", 0x7FF},
      {"\xE0\xA0\x80", 0x800}, {"\xE2\x82\xAC", 0x20AC}, {"\xED\x9F\xBF", 0xD7FF},
      {"\xEE\x80\x80", 0xE000}, {"\xEF\xBF\xBF", 0xFFFF},
      {"\xF0\x90\x80\x80", 0x10000}, {"\xF0\x9F\x98\x80", 0x1F600}, {"\xF4\x8F\xBF\xBF", 0x10FFFF},
  };
  for (const auto& c : cases) {
    const Utf8Char got = decode_utf8(c.bytes + "tail", 0);
    EXPECT_EQ(got.code_point, c.code_point) << "bytes of U+" << std::hex << uint32_t(c.code_point);
    EXPECT_EQ(got.length, c.bytes.size()) << "bytes of U+" << std::hex << uint32_t(c.code_point);
  }
}

TEST(Utf8Decode, DecodesAtAnOffset) {
  const std::string text = "a\xC3\xA9z";
  EXPECT_EQ(decode_utf8(text, 1).code_point, 0xE9u);
  EXPECT_EQ(decode_utf8(text, 3).code_point, U'z');
}

TEST(Utf8Decode, RefusesEveryInvalidSequence) {
  const std::string invalid[] = {
      "\x80", "\xBF",                          // a continuation byte where a character begins
      "\xC0\x80", "\xC1\xBF",                  // overlong 2-byte forms
      "\xE0\x80\x80", "\xE0\x9F\xBF",          // overlong 3-byte forms
      "\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF",  // overlong 4-byte forms
      "\xED\xA0\x80", "\xED\xBF\xBF",          // surrogates U+D800, U+DFFF
      "\xF4\x90\x80\x80", "\xF5\x80\x80\x80",  // above U+10FFFF
      "\xF8\x88\x80\x80\x80", "\xFF",          // lead bytes UTF-8 never uses
      "\xC3", "\xE2\x82", "\xF0\x9F\x98",      // truncated at the end of the text
      "\xC3\x41", "\xE2\x28\xA1", "\xF0\x9F\x98\x41",  // a non-continuation byte inside
  };
  for (const auto& bytes : invalid) {
    const Utf8Char got = decode_utf8(bytes, 0);
    EXPECT_EQ(got.length, 0u) << "first byte 0x" << std::hex << int(static_cast<unsigned char>(bytes[0]));
    EXPECT_EQ(got.code_point, 0u);
  }
}

TEST(Utf8Decode, TruncationIsMeasuredFromTheOffsetNotTheBuffer) {
  const std::string text = "\xE2\x82\xAC";
  // The view ends inside the character, though the bytes beyond it are a valid tail.
  EXPECT_EQ(decode_utf8(std::string_view(text).substr(0, 2), 0).length, 0u);
}

TEST(Utf8Decode, NextCodePointReadsInvalidBytesAsReplacementOneByteAtATime) {
  const std::string text = "a\xE2\x82" "b\xC0\x80\xF0\x9F\x98\x80";
  std::u32string got;
  for (size_t i = 0; i < text.size();) got += next_code_point(text, i);
  EXPECT_EQ(got, U"a\uFFFD\uFFFDb\uFFFD\uFFFD\U0001F600");
}

TEST(Utf8Decode, LeadLengthReadsTheHighBitsAlone) {
  EXPECT_EQ(utf8_lead_length(0x41), 1u);
  EXPECT_EQ(utf8_lead_length(0x80), 1u);  // a stray continuation byte steps alone
  EXPECT_EQ(utf8_lead_length(0xBF), 1u);
  EXPECT_EQ(utf8_lead_length(0xC3), 2u);
  EXPECT_EQ(utf8_lead_length(0xE2), 3u);
  EXPECT_EQ(utf8_lead_length(0xF0), 4u);
  EXPECT_TRUE(is_utf8_continuation('\x80'));
  EXPECT_FALSE(is_utf8_continuation('\xC3'));
  EXPECT_FALSE(is_utf8_continuation('A'));
}

TEST(Utf8Decode, ValidPrefixStopsAtTheFirstInvalidSequence) {
  EXPECT_EQ(utf8_valid_prefix(""), 0u);
  EXPECT_EQ(utf8_valid_prefix("caf\xC3\xA9"), 5u);
  EXPECT_EQ(utf8_valid_prefix("caf\xC3\xA9\xED\xA0\x80!"), 5u);
  EXPECT_EQ(utf8_valid_prefix("ab\xE2\x82"), 2u);
  EXPECT_EQ(utf8_sequence_length("\xE2\x82\xAC", 0), 3u);
  EXPECT_EQ(utf8_sequence_length("\xC0\x80", 0), 0u);
}

}  // namespace
}  // namespace mlm
