// CURVE keys for the coordinator and its agents, and the folder they travel through.
//
// Every run generates fresh keys: one pair for the coordinator (the server) and one for its agents
// (the clients). The key folder holds what an agent needs and nothing else of the coordinator:
//   <dir>/coordinator.pub   the coordinator's public key (Z85, 40 characters)
//   <dir>/agent.pub         the agents' public key
//   <dir>/agent.key         the agents' secret key
// The folder is created 0700 and the files 0600 (readable by the user only); an agent refuses a
// key file that others may read. On a Slurm allocation the folder sits in the run's state folder,
// which every node sees through the shared file system.
#pragma once

#include <string>

#include "core/status.hpp"

namespace chorus {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters
};

// Errors: internal when libzmq was built without CURVE (no libsodium/tweetnacl).
Result<CurveKeyPair> generate_curve_keypair();

// Whether `key` is a well-formed Z85 CURVE key (40 characters that decode to 32 bytes).
bool valid_curve_key(const std::string& key);

// What an agent reads from the key folder.
struct AgentKeys {
  std::string coordinator_public;
  CurveKeyPair agent;
};

// Creates `dir` (0700, parents as needed) and writes the three files (0600, replaced if present).
// Errors: io_error naming the file and the OS's words.
Status write_agent_keys(const std::string& dir, const AgentKeys& keys);

// One pair as two files, <dir>/<stem>.key (0600) and <dir>/<stem>.pub (0644), for a served
// instance's own pair and its TCP clients' (`chorus keys`). `dir` is created when missing.
// Errors: io_error naming the file.
Status write_key_pair(const std::string& dir, const std::string& stem, const CurveKeyPair& pair);
// Errors: not_found (a file missing), invalid_argument (a malformed key, or a secret key file
// that group or others may read: "chmod 600 <file>"), io_error.
Result<CurveKeyPair> read_key_pair(const std::string& dir, const std::string& stem);
// A file holding one public key. Errors: as read_key_pair's.
Result<std::string> read_public_key(const std::string& path);

// Reads the three files. Errors: not_found (a file missing), invalid_argument (a malformed key,
// or a file that group or others may read: "chmod 600 <file>"), io_error.
Result<AgentKeys> read_agent_keys(const std::string& dir);

// The pair an agent registering as `node` uses from a run's key folder `dir`: `dir` itself when
// it holds agent.key (a one-agent folder, or the shared layout); else `dir/<node>/`; else a slot
// `dir/agent-K/` already claimed for `node`, else the first free one, claimed atomically
// (O_EXCL). Errors: not_found ("no key for node n5 in DIR: the run's nodes are ..."),
// unavailable (every slot taken), and those of read_agent_keys.
Result<AgentKeys> find_agent_keys(const std::string& dir, const std::string& node);

}  // namespace chorus
