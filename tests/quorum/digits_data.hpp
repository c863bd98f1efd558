// The digits data for the tests: fetched by scripts/fetch_digits.sh into the build's data folder
// when it is not there yet (Debian's mirror is reachable in CI), so a test never skips silently.
#pragma once

#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "schedulers/quorum/sgd/digits.hpp"

namespace chorus::test {

inline sgd::Digits digits_data() {
  const std::string path = CHORUS_DIGITS_CSV;
  auto data = sgd::read_digits_csv(path);
  if (!data.ok()) {
    const std::string folder = path.substr(0, path.rfind('/'));
    const std::string cmd =
        std::string(CHORUS_SOURCE_DIR) + "/scripts/fetch_digits.sh '" + folder + "'";
    REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, "could not fetch the digits data: " << cmd);
    data = sgd::read_digits_csv(path);
  }
  REQUIRE_MESSAGE(data.ok(), data.status().message());
  return std::move(*data);
}

}  // namespace chorus::test
