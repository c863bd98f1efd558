// NodeInfo: a place tasks can run (this machine, a Slurm node, an agent).
#pragma once

#include <string>

#include "core/resources.hpp"

namespace chorus {

struct NodeInfo {
  std::string name;
  Resources capacity;
  // The IP address others reach the node at, when known (an agent's, as its connection showed
  // it); empty: by its name.
  std::string address = {};
};

// This machine: online cores (sched_getaffinity), physical memory in MB, no GPUs.
NodeInfo local_node_info();

}  // namespace chorus
