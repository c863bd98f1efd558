// The CURVE keys of one training run, in <state>/keys/ (0700; files 0600, readable by the user
// only, as the agents' key folder: runtime/transport/curve_keys.hpp):
//   ps.pub ps.key           the parameter server's pair
//   worker.pub worker.key   the workers' pair (one for all of them, like the agents': the PS
//                           admits that key; a worker's id travels in its HELO frame)
// The PS creates the folder on its first start (into a temporary folder renamed into place, so a
// worker never sees half of it) and reuses it after a restart, so connected workers stay valid.
#pragma once

#include <string>

#include "core/status.hpp"
#include "runtime/transport/curve_keys.hpp"

namespace quorum_training {

struct RunKeys {
  chorus::CurveKeyPair ps;
  chorus::CurveKeyPair worker;
};

// Reads <dir>, or creates it when it does not exist. Errors: io_error, invalid_argument (a
// malformed key, or a file others may read: "chmod 600 FILE").
chorus::Result<RunKeys> load_or_create_keys(const std::string& dir);

// What a worker reads: the PS's public key and the workers' pair (ps.key is not needed).
// Errors: not_found while the folder is not there yet, else as above.
chorus::Result<RunKeys> read_worker_keys(const std::string& dir);

}  // namespace quorum_training
