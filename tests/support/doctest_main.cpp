// The test binaries' main. Under the ASan+UBSan build, LeakSanitizer reads tests/lsan.supp (leaks
// inside libraries we do not own); the chorus processes the tests start inherit the setting.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "support/process.hpp"

int main(int argc, char** argv) {
  if (std::getenv("LSAN_OPTIONS") == nullptr) {
    const std::string options = "suppressions=" + chorus::test::source_dir() + "/tests/lsan.supp";
    ::setenv("LSAN_OPTIONS", options.c_str(), 0);
  }
  return doctest::Context(argc, argv).run();
}
