// The journal's node field of an attempt (TaskEvent::node, EventRecord::node), written and read
// here only: one node's name ("cn01"), or for an MPI task spread over several nodes each node
// with the cores it holds there ("n1:8,n2:4").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chorus {

// Appends one node of a spread attempt's field: "n1:8", after a ',' unless `out` is empty.
void append_node_field(std::string& out, std::string_view node, std::int64_t cores);

// The nodes of an event's `node` field with the cores held on each: "n1" -> {n1, cores};
// "n1:8,n2:4" -> {n1, 8}, {n2, 4}. Empty field: nothing.
struct NodeCores {
  std::string node;
  int cores = 0;
};
std::vector<NodeCores> split_node_field(std::string_view field, int cores);

}  // namespace chorus
