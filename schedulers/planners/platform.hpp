// Platform: the machine types a graph planner may place tasks on.
//
// A task of runtime r (its recorded or estimated seconds on a speed-1.0 machine) runs r / speed
// seconds on a type and costs (r / speed) * price. `count` machines of `cores` cores exist of each
// type; HEFT uses every core as a processor, while the WSP planners (SPWD, whole-instance MILP)
// follow the paper and ignore counts (every type has as many machines as needed).
#pragma once

#include <string>
#include <vector>

#include "core/status.hpp"

namespace chorus {

struct MachineType {
  std::string name;
  double speed = 1.0;  // relative to the machine the runtimes were recorded on
  int cores = 1;       // per machine
  int count = 1;       // machines of this type
  double price = 1.0;  // cost per second of use
};

struct Platform {
  std::string name;
  std::vector<MachineType> types;

  // Index of the type with the highest speed (the first one on ties). Platform must be valid.
  std::size_t fastest() const;
  // Mean of the speeds (the paper's default deadline uses it).
  double mean_speed() const;
};

// "platform 'x': no machine types", "machine type 'a': speed must be > 0 (got 0)", ...
Status validate_platform(const Platform& platform);

}  // namespace chorus
