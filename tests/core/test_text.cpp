#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "core/text.hpp"

using chorus::first_invalid_utf8;
using chorus::utf8_sequence_length;

TEST_CASE("Core.Text.Utf8SequenceLengthOfWellFormedCharacters") {
  CHECK(utf8_sequence_length("a", 0) == 1);
  CHECK(utf8_sequence_length("\xC3\xA9", 0) == 2);          // é
  CHECK(utf8_sequence_length("\xE2\x82\xAC", 0) == 3);      // €
  CHECK(utf8_sequence_length("\xF0\x9F\x98\x80", 0) == 4);  // an emoji
}

TEST_CASE("Core.Text.Utf8SequenceLengthRefusesWhatRfc3629Forbids") {
  CHECK(utf8_sequence_length("\x80", 0) == 0);              // a continuation byte alone
  CHECK(utf8_sequence_length("\xC0\xAF", 0) == 0);          // overlong '/'
  CHECK(utf8_sequence_length("\xE0\x80\xAF", 0) == 0);      // overlong, three bytes
  CHECK(utf8_sequence_length("\xED\xA0\x80", 0) == 0);      // a surrogate
  CHECK(utf8_sequence_length("\xF4\x90\x80\x80", 0) == 0);  // above U+10FFFF
  CHECK(utf8_sequence_length("\xE2\x82", 0) == 0);          // cut short at the end
  CHECK(utf8_sequence_length("\xFF", 0) == 0);
}

TEST_CASE("Core.Text.FirstInvalidUtf8GivesTheOffsetOfTheFirstBadByte") {
  CHECK(first_invalid_utf8("plain ascii") == std::string_view::npos);
  CHECK(first_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC") == std::string_view::npos);
  CHECK(first_invalid_utf8("ok\xFFrest") == 2);
  CHECK(first_invalid_utf8("\xC3\xA9\xC3") == 2);  // a sequence cut by the end of the text
  CHECK(first_invalid_utf8(std::string_view("a\0b", 3)) == std::string_view::npos);
}
