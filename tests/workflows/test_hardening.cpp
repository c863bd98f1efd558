// Inputs that once crashed the loader or were silently accepted (issue 12): each is refused with
// a located "path:line:col: message", before anything large is allocated.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;
using chorus::test::error_of;
using chorus::test::parse;

namespace {

// "wf.yaml:L:C: <start of text>" is one of the message's lines.
bool has_located(const std::string& message, const std::string& position, const std::string& text) {
  const std::string head = "wf.yaml:" + position + ": " + text;
  std::size_t pos = 0;
  while (pos <= message.size()) {
    std::size_t end = message.find('\n', pos);
    if (end == std::string::npos) end = message.size();
    if (message.compare(pos, head.size(), head) == 0) return true;
    pos = end + 1;
  }
  return false;
}

#define CHECK_LOCATED(message, position, text)                                                 \
  CHECK_MESSAGE(has_located(message, position, text), "expected wf.yaml:" << position << ": "  \
                                                                          << text << "\nin:\n" \
                                                                          << message)

}  // namespace

TEST_CASE("Workflows.Hardening.AliasesOfALargeScalarAreRefusedByTheirExpandedSize") {
  // 100,000 aliases of a 10 KB scalar: 1 GB once expanded, in a file of about 300 KB.
  std::string yaml = "env: {BIG: &big \"" + std::string(10'240, 'x') + "\"}\n";
  yaml += "tasks:\n  - name: a\n    command: [echo";
  for (int i = 0; i < 100'000; ++i) yaml += ", *big";
  yaml += "]\n";
  const std::string m = error_of(yaml);
  // At the anchor of the value (yaml-cpp marks an anchored node at its '&').
  CHECK_LOCATED(m, "1:12",
                "this file holds more than 128 MiB of YAML once its aliases (*name) "
                "are expanded, the limit for a workflow (the walk passed it here, at "
                "a value of 10240 bytes)");
}

TEST_CASE("Workflows.Hardening.NestedAliasesAreRefusedWithoutWalkingTheWholeTree") {
  // "Billion laughs": each level holds ten aliases of the one before; 10^9 leaves in all.
  std::string yaml = "a0: &a0 [x]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string prev = "*a" + std::to_string(level - 1);
    yaml += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [" + prev;
    for (int k = 1; k < 10; ++k) yaml += ", " + prev;
    yaml += "]\n";
  }
  yaml += "tasks: [{name: a, command: [x]}]\n";
  const std::string m = error_of(yaml);
  CHECK(contains(m, "MiB of YAML once its aliases (*name) are expanded"));
}

TEST_CASE("Workflows.Hardening.AnAliasInsideItsOwnAnchorIsRefused") {
  const std::string m = error_of("tasks: &t [*t]\n");
  CHECK_LOCATED(m, "1:8", "this node contains an alias of itself");
}

TEST_CASE("Workflows.Hardening.ASweepCopyingALargeEnvIsRefusedBeforeExpansion") {
  const std::string yaml =
      "tasks:\n  - name: t\n    foreach: {i: \"range(0, 1000000)\"}\n"
      "    command: [echo, \"{i}\"]\n    env: {BIG: \"" +
      std::string(10'240, 'x') + "\"}\n";
  const std::string m = error_of(yaml);
  CHECK_LOCATED(m, "3:5", "too much text: sweep 't' would expand to 1000000 members of up to ");
  CHECK(contains(m, "a workflow's tasks may hold at most 512 MiB"));
}

TEST_CASE("Workflows.Hardening.InheritedEnvCopiedIntoManyTasksIsRefusedWhileReading") {
  // A 256 KiB value in defaults is copied into each task as it is read: with a budget of 2 MiB
  // (the default is 512 MiB), the eighth task passes it.
  std::string yaml = "defaults: {env: {BIG: \"" + std::string(1 << 18, 'x') + "\"}}\ntasks:\n";
  for (int i = 0; i < 20; ++i) yaml += "  - {name: t" + std::to_string(i) + ", command: [x]}\n";
  WorkflowLoadOptions options = chorus::test::test_options();
  options.max_text_bytes = 2 << 20;
  CHECK(error_of(yaml, options) ==
        "wf.yaml:10:12: the tasks up to task 't7' hold more than 2 MiB of text (commands, env, "
        "workdirs, outputs, inputs; each task its own copy of what it inherits from 'defaults:' "
        "and the top level), the limit for a workflow; task 't7' alone holds 262150 bytes. Keep "
        "large values in a file the tasks read");
  options.max_text_bytes = 8 << 20;
  CHECK(parse(yaml, options).ok());
}

TEST_CASE("Workflows.Hardening.InvalidUtf8IsRefusedAtItsFirstByte") {
  CHECK_LOCATED(error_of("tasks:\n  - name: \"ab\xff\"\n    command: [x]\n"), "2:14",
                "invalid UTF-8: byte 0xFF at offset 20 does not start a valid UTF-8 character");
  // Overlong '/', a surrogate, a truncated sequence at the end of the file.
  CHECK_LOCATED(error_of("tasks: [{name: a\xc0\xaf, command: [x]}]\n"), "1:17",
                "invalid UTF-8: byte 0xC0");
  CHECK_LOCATED(error_of("tasks: [{name: a, command: [\"\xed\xa0\x80\"]}]\n"), "1:30",
                "invalid UTF-8: byte 0xED");
  CHECK_LOCATED(error_of("tasks: [{name: a, command: [x]}] # \xe2\x82"), "1:36",
                "invalid UTF-8: byte 0xE2");
  // Well-formed characters of every length load.
  auto ok = parse("tasks: [{name: \"caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80\", command: [x]}]\n");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->tasks[0].name == "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80");
}

TEST_CASE("Workflows.Hardening.AnUnterminatedQuoteIsRefusedWhereItOpened") {
  // yaml-cpp 0.7 accepts these and the second task becomes part of the first one's command.
  CHECK_LOCATED(error_of("tasks:\n  - name: a\n    command: \"echo hi\n  - name: b\n"
                         "    command: [x]\n"),
                "3:14", "this double-quoted string is never closed");
  CHECK_LOCATED(error_of("tasks:\n  - name: a\n    command: [echo, 'hi]\n  - name: b\n"
                         "    command: [x]\n"),
                "3:21", "this single-quoted string is never closed");
  CHECK_LOCATED(error_of("tasks:\n  - name: a\n    command: &c \"x\n"), "3:17",
                "this double-quoted string is never closed");
  // Quotes that open no string: in plain scalars, comments, block scalars; closed on a later
  // line; escaped.
  auto ok = parse(R"Y(tasks:
  - name: a            # it's a comment with a "quote
    command: echo it's fine "really
    description: |
      don't "stop
  - name: b
    command: ["multi
      line", 'it''s', "a \" quote"]
)Y");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->tasks[0].cmd.shell == "echo it's fine \"really");
  CHECK(ok->tasks[1].cmd.argv == std::vector<std::string>{"multi line", "it's", "a \" quote"});
}

TEST_CASE("Workflows.Hardening.NulCharactersFromEscapesAreRefused") {
  CHECK_LOCATED(error_of("tasks:\n  - name: a\n    workdir: \"/tmp\\0/etc\"\n    command: [x]\n"),
                "3:14",
                "a NUL character (written \\0, \\x00 or \\u0000) at character 5 of this "
                "string");
  CHECK_LOCATED(error_of("tasks: [{name: a, command: [x, \"a\\x00b\"]}]\n"), "1:32",
                "a NUL character");
  CHECK_LOCATED(error_of("tasks: [{name: a, command: \"echo\\u0000\"}]\n"), "1:28",
                "a NUL character");
  CHECK_LOCATED(error_of("tasks: [{name: a, command: [x], env: {\"A\\0B\": v}}]\n"), "1:39",
                "a NUL character");
  CHECK_LOCATED(error_of("tasks: [{name: a, command: [x], env: {A: \"\\0\"}}]\n"), "1:42",
                "a NUL character (written \\0, \\x00 or \\u0000) at character 1");
  CHECK_LOCATED(error_of("tasks: [{name: a, command: [x], outputs: [\"o\\0\"], inputs: i}]\n"),
                "1:43", "a NUL character");
}

TEST_CASE("Workflows.Hardening.AParserThatStallsIsASyntaxErrorNotAHang") {
  // yaml-cpp 0.7's LoadAll returned empty documents for ever on these 3 bytes (found by fuzzing).
  CHECK(error_of("&\",") ==
        "wf.yaml:1:3: YAML syntax error: the parser cannot read past this point");
  // Content after the end of the first document is never ignored.
  CHECK(contains(error_of("tasks: [{name: a, command: [x]}]\n--- &\","), "wf.yaml:2:"));
}

TEST_CASE("Workflows.Hardening.ARawNulByteGivesItsOffsetAndPosition") {
  const std::string text = std::string("tasks:\n  - name: a\0b\n", 21);
  CHECK(error_of(text) ==
        "wf.yaml:2:12: not a text file: a NUL byte at offset 18; a workflow file is YAML text");
}

TEST_CASE("Workflows.Hardening.AnEmptyListItemIsLocatedAtItsDash") {
  CHECK_LOCATED(error_of("tasks:\n  -\n  - name: b\n    command: [x]\n"), "2:3",
                "task #1 must be a map with at least 'name' and 'command', got nothing");
  CHECK_LOCATED(error_of("tasks:\n  - name: b\n    command: [x]\n  -   # nothing here\n\n"), "4:3",
                "task #2 must be a map with at least 'name' and 'command', got nothing");
  CHECK_LOCATED(error_of("tasks:\n  - name: a\n    command:\n      - x\n      -\n"), "5:7",
                "each item of 'command' of task 'a' must be a single value, got nothing");
  CHECK_LOCATED(error_of("tasks:\n  - name: a\n    command: [x, ~]\n"), "3:18",
                "each item of 'command' of task 'a' must be a single value, got nothing");
  CHECK_LOCATED(error_of("tasks:\n  - null\n  -\nname: x\n"), "2:5", "task #1 must be a map");
  CHECK_LOCATED(error_of("tasks:\n  - null\n  -\nname: x\n"), "3:3", "task #2 must be a map");
  CHECK_LOCATED(
      error_of("services:\n  -\ntasks: [{name: a, command: [x]}]\n"), "2:3",
      "service #1 must be a map with at least 'name', 'command' and 'ready', got nothing");
}

TEST_CASE("Workflows.Hardening.EmptyAndCommentOnlyFilesPointAtTheirStart") {
  CHECK(error_of("") == "wf.yaml:1:1: the file is empty; a workflow needs at least 'tasks:'");
  CHECK(error_of("\n  \n") == "wf.yaml:1:1: the file is empty; a workflow needs at least 'tasks:'");
  CHECK(error_of("# just a comment\n# and another\n") ==
        "wf.yaml:1:1: the file holds no workflow (only comments or blank lines); it needs at "
        "least 'tasks:'");
}

TEST_CASE("Workflows.Hardening.LongValuesAreShortenedInMessages") {
  const std::string m =
      error_of("tasks: [{name: a, command: [x], shell: \"" + std::string(5000, 'y') + "\"}]\n");
  CHECK(contains(m, "(5000 bytes)"));
  CHECK(m.size() < 400);
}

TEST_CASE("Workflows.Hardening.AFileAbove16MiBIsRefusedWithItsSize") {
  char dir[] = "/tmp/chorus-hardening-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/big.yaml";
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const off_t size = 17 * 1024 * 1024 + 512 * 1024;  // sparse: nothing is written
  CHECK(::ftruncate(fd, size) == 0);
  ::close(fd);
  auto r = load_workflow_file(path, chorus::test::test_options());
  std::filesystem::remove_all(dir);
  REQUIRE(!r.ok());
  CHECK(r.status().message() ==
        path +
            ": the file is 18350080 bytes (17.5 MiB); workflow files are limited to 16 MiB "
            "(use foreach sweeps instead of listing tasks one by one)");
}
