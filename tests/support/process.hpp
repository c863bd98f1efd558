// Test helpers: temporary folders and running real programs (the chorus binary above all).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace chorus::test {

// A fresh folder under $TMPDIR, removed (recursively) when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv in cwd (extra env on top of ours) and waits for it; output captured via temp files.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd,
                          const std::map<std::string, std::string>& env = {});

// The same with the chorus binary of this build as argv[0].
ProcessResult run_chorus(const std::vector<std::string>& args, const std::string& cwd);

// Starts argv in the background (own process group), output to <cwd>/bg.out and bg.err.
pid_t start_process(const std::vector<std::string>& argv, const std::string& cwd);
// Waits for a background process; returns its exit code (128 + signal when killed).
int wait_process(pid_t pid);

void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);
std::vector<std::string> read_lines(const std::string& path);

// Polls `predicate` every 20 ms up to `seconds`; returns whether it became true.
template <typename Pred>
bool eventually(Pred predicate, double seconds = 30);
bool sleep_ms(int ms);

// Whether a process with this pid exists (and is not a zombie).
bool process_alive(pid_t pid);

std::string chorus_bin();
std::string source_dir();
std::string binary_dir();

template <typename Pred>
bool eventually(Pred predicate, double seconds) {
  for (int i = 0; i < static_cast<int>(seconds * 50); ++i) {
    if (predicate()) return true;
    sleep_ms(20);
  }
  return predicate();
}

}  // namespace chorus::test
