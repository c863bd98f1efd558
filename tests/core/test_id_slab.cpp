#include <doctest/doctest.h>

#include <string>

#include "core/id_slab.hpp"

using chorus::IdSlab;

TEST_CASE("Core.IdSlab.AFullBlockGoesOnceEachOfItsValuesIsReleased") {
  IdSlab<std::string, 4> slab;
  for (int i = 0; i < 10; ++i) slab.push_back("value " + std::to_string(i) + " of some length");
  CHECK(slab.size() == 10);
  CHECK(slab.blocks_held() == 3);
  std::string& five = slab[5];
  for (std::size_t id : {0, 1, 2}) slab.release(id);
  CHECK(slab.blocks_held() == 3);
  CHECK(slab.held(3));
  CHECK_FALSE(slab.held(1));
  CHECK(slab[1].empty());  // its block is still there: the value was reset
  slab.release(3);
  CHECK(slab.blocks_held() == 2);
  CHECK_FALSE(slab.held(0));
  CHECK(five == "value 5 of some length");  // other blocks stay put
  slab.release(3);                          // again: nothing
  slab.release(99);                         // out of range: nothing
  CHECK(slab.blocks_held() == 2);
  // The last block is not full: releasing all it has keeps it for the ids to come.
  slab.release(8);
  slab.release(9);
  CHECK(slab.blocks_held() == 2);
  slab.push_back("ten");
  slab.push_back("eleven");
  CHECK(slab.blocks_held() == 2);
  slab.release(10);
  slab.release(11);
  CHECK(slab.blocks_held() == 1);
  CHECK(slab.size() == 12);
}

TEST_CASE("Core.IdSlab.PopBackTakesBackTheLastId") {
  IdSlab<int, 2> slab;
  slab.push_back(1);
  slab.push_back(2);
  slab.push_back(3);
  CHECK(slab.blocks_held() == 2);
  slab.pop_back();
  CHECK(slab.size() == 2);
  CHECK(slab.blocks_held() == 1);
  slab.pop_back();
  CHECK(slab.size() == 1);
  CHECK(slab[0] == 1);
  CHECK(slab.push_back(7) == 7);
  CHECK(slab.held(1));
  slab.clear();
  CHECK(slab.size() == 0);
  CHECK(slab.blocks_held() == 0);
}
