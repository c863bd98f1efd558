// chorus keys: this user's CURVE key pair for served instances over TCP (chorus serve with
// `listen:`). Writes <folder>/client.key (0600) and client.pub (0644), folder $CHORUS_KEYS or
// ~/.chorus/keys, and prints the public key with the config line that admits it. An existing
// pair is kept (and printed) unless --force: a server may already list it.
#include <pwd.h>
#include <unistd.h>

#include <cstdio>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "runtime/transport/curve_keys.hpp"

namespace chorus::cli {
namespace {

void add_keys_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "keys", "Create this user's key pair for chorus serve over TCP and print its public key");
  struct Args {
    std::string dir;
    bool force = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--dir", a->dir, "Key folder (default: $CHORUS_KEYS, else ~/.chorus/keys)");
  cmd->add_flag("--force", a->force, "Replace an existing pair (servers listing it refuse you)");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    const std::string dir = a->dir.empty() ? client_key_dir() : a->dir;
    auto pair = read_key_pair(dir, "client");
    const bool fresh = a->force || pair.status().code() == ErrorCode::not_found;
    if (!fresh && !pair.ok()) {
      out.error(pair.status().message() + " (--force replaces the pair)");
      throw CLI::RuntimeError(kExitBadInput);
    }
    if (fresh) {
      pair = generate_curve_keypair();
      if (!pair.ok()) {
        out.error(pair.status().message());
        throw CLI::RuntimeError(kExitError);
      }
      if (Status s = write_key_pair(dir, "client", *pair); !s.ok()) {
        out.error(s.message());
        throw CLI::RuntimeError(kExitError);
      }
    }
    const passwd* pw = ::getpwuid(::getuid());
    const std::string user = pw != nullptr ? pw->pw_name : std::to_string(::getuid());
    std::printf("%s\n", pair->public_key.c_str());
    std::fprintf(stderr,
                 "%s %s/client.key (secret, 0600) and client.pub. The instance's admin admits it "
                 "with this line in serve.yaml:\n  keys: {users: {%s: [\"%s\"]}}\nand you need "
                 "the instance's public key (its <state>/serve.pub) in %s/server.pub or "
                 "CHORUS_SERVER_KEY.\n",
                 fresh ? "wrote" : "kept", dir.c_str(), user.c_str(), pair->public_key.c_str(),
                 dir.c_str());
  });
}

const CommandRegistrar registrar{"keys", add_keys_command};

}  // namespace
}  // namespace chorus::cli
