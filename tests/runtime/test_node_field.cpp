// The journal's node field (runtime/store/node_field.hpp): written and read in one file.
#include <doctest/doctest.h>

#include "runtime/store/node_field.hpp"

TEST_CASE("Runtime.NodeField.SpreadFieldIsWrittenAsNodeColonCores") {
  std::string field;
  chorus::append_node_field(field, "n1", 8);
  CHECK(field == "n1:8");
  chorus::append_node_field(field, "n2", 4);
  CHECK(field == "n1:8,n2:4");
}

TEST_CASE("Runtime.NodeField.ReadsBackBothForms") {
  std::string field;
  chorus::append_node_field(field, "n1", 8);
  chorus::append_node_field(field, "n2", 4);
  auto parts = chorus::split_node_field(field, 12);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].node == "n1");
  CHECK(parts[0].cores == 8);
  CHECK(parts[1].node == "n2");
  CHECK(parts[1].cores == 4);
  parts = chorus::split_node_field("cn01", 3);
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].node == "cn01");
  CHECK(parts[0].cores == 3);
  CHECK(chorus::split_node_field("", 1).empty());
}
