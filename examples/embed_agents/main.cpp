// embed_agents: an application that runs a Chorus workflow on agents through the public API —
// the agents backend (chorus::make_agents_backend), whose agents this program starts itself as
// `chorus agent` processes once the backend listens, over real CURVE-encrypted ZeroMQ.
//
//   embed_agents CHORUS [STATE_DIR] [AGENTS]
//
// CHORUS is the chorus executable the agents run (`chorus agent --connect ... --keys ...`).
// 16 executable tasks each note the node (agent) they ran on; a function task, run in this
// process, counts them per node.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chorus/chorus.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {

// Starts `argv` as a child process; -1 when it cannot.
pid_t spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  return posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) == 0 ? pid : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: embed_agents CHORUS [STATE_DIR] [AGENTS]\n");
    return 2;
  }
  const std::string chorus_bin = argv[1];
  const std::string state_dir = argc > 2 ? argv[2] : ".chorus-embed-agents";
  const int agent_count = argc > 3 ? std::stoi(argv[3]) : 2;
  constexpr int kTasks = 16;

  chorus::WorkflowGraph wf;
  wf.name = "embed-agents";
  std::vector<chorus::TaskId> notes;
  for (int i = 0; i < kTasks; ++i) {
    const std::string n = "note[" + std::to_string(i) + "]";
    notes.push_back(wf.add(chorus::shell_task(
        n, "sleep 0.2; echo $CHORUS_NODE > node." + std::to_string(i) + ".txt")));
  }
  std::map<std::string, int> per_node;
  wf.add(chorus::function_task(
      "count",
      [&per_node]() -> chorus::Status {
        for (int i = 0; i < kTasks; ++i) {
          std::ifstream in("node." + std::to_string(i) + ".txt");
          std::string node;
          if (!(in >> node)) return chorus::io_error("task " + std::to_string(i) + " left no note");
          ++per_node[node];
        }
        return {};
      },
      notes));

  // The agents: `agent_count` of them, started by this program once the backend listens.
  std::vector<pid_t> agents;
  chorus::AgentsBackendOptions ao;
  ao.count = static_cast<std::size_t>(agent_count);
  ao.agent_wait = std::chrono::seconds(30);
  ao.on_listening = [&](const chorus::AgentInvitation& invitation) {
    for (std::size_t k = 1; k <= invitation.count; ++k) {
      pid_t pid = spawn({chorus_bin, "agent", "--connect", invitation.endpoint, "--keys",
                         invitation.key_dir, "--node", "agent-" + std::to_string(k), "--cores", "2",
                         "--timeout", "10s"});
      if (pid > 0) agents.push_back(pid);
    }
  };
  auto backend = chorus::make_agents_backend(std::move(ao));
  chorus::CancelToken cancel;
  int code = 0;
  if (chorus::Status s = backend->start({&cancel, state_dir}); !s.ok()) {
    std::fprintf(stderr, "embed_agents: %s\n", s.message().c_str());
    code = 2;
  } else {
    chorus::RunOptions options;
    options.state_dir = state_dir;
    options.backend = backend.get();
    options.cancel = &cancel;
    auto outcome = chorus::run_workflow(wf, options);
    backend->stop();  // tells the agents to exit
    if (!outcome.ok()) {
      std::fprintf(stderr, "embed_agents: %s\n", outcome.status().message().c_str());
      code = 2;
    } else {
      const auto& p = outcome->summary.progress;
      std::printf("run %s: %s, %lld tasks succeeded on %zu agents\n", outcome->run.id.c_str(),
                  chorus::to_string(outcome->summary.status), static_cast<long long>(p.succeeded),
                  outcome->run.nodes.size());
      for (const auto& [node, tasks] : per_node)
        std::printf("%s ran %d tasks\n", node.c_str(), tasks);
      code = outcome->summary.status == chorus::RunStatus::succeeded ? 0 : 1;
    }
  }
  // The agents exit on the backend's shutdown (or, failing that, after 10 s of silence).
  for (pid_t pid : agents) {
    int status = 0;
    if (waitpid(pid, &status, 0) == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      std::fprintf(stderr, "embed_agents: agent %d ended with status %d\n", static_cast<int>(pid),
                   status);
      if (code == 0) code = 1;
    }
  }
  return code;
}
