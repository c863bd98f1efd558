// A scheduling policy's options as written — in a workflow's `scheduler:` section or as
// command-line flags — each with where it came from, so the policy that refuses one can point at
// it. workflows/ and cli/ fill them in; the policies read them (schedulers/policy_options.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chorus {

// Where an option (or a policy's name) came from: a place in a workflow file, or a flag.
struct OptionOrigin {
  std::string source;  // the file as the user named it, or the flag ("--weights"); empty = code
  int line = 0;        // 1-based in the file; 0 = not from a file
  int column = 0;

  // "wf.yaml:3:12", "--weights", or "" (built in code).
  std::string format() const;
  bool in_file() const { return line > 0; }
};

struct OptionEntry;

// A value as written: a scalar's text (a number, a duration, a name, a path), or a map or list of
// further values (`weights: {alice: 2}`).
struct OptionValue {
  enum class Kind : std::uint8_t { scalar, map, list, null };
  Kind kind = Kind::scalar;
  std::string text;                // a scalar's
  std::vector<OptionEntry> items;  // a map's entries (a list's, keys empty), in written order
  OptionOrigin at;

  // For messages ("got ..."): "'text'" (cut at 80 bytes), "a map", "a list" or "nothing".
  std::string describe() const;
};

struct OptionEntry {
  std::string key;
  OptionOrigin key_at;
  OptionValue value;
  // The section of the file it was written in, for messages: empty = a workflow's 'scheduler'
  // ("policy_options" in serve.yaml, "quorum" for a quorum sweep's).
  std::string section;
};

// The options of a scheduler section: every key that is not a policy's name or a planner's.
struct PolicyOptions {
  std::vector<OptionEntry> entries;  // keys unique, in written order

  const OptionEntry* find(std::string_view key) const;
  bool empty() const { return entries.empty(); }
  // Adds `entry`, replacing one of the same key (a flag overriding the file).
  void set(OptionEntry entry);
};

// A problem with an option (or a policy's name), located.
struct OptionIssue {
  OptionOrigin at;
  std::string message;

  // "wf.yaml:3:12: message", "--weights: message" or "message".
  std::string format() const;
};

// One issue per line, in order.
std::string format_issues(const std::vector<OptionIssue>& issues);

}  // namespace chorus
