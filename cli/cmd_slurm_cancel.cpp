// chorus slurm-cancel JOBID...: end Slurm batch jobs and all their steps (as scancel does),
// through libslurm. Cancelling a job that has already finished is not an error.
#include <algorithm>
#include <charconv>

#include "adapters/slurm/slurm_client.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"

namespace chorus::cli {
namespace {

void add_slurm_cancel_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("slurm-cancel", "Cancel Slurm jobs and their steps");
  auto jobs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("jobs", *jobs, "Job ids")->required();
  cmd->callback([jobs] {
    const Output out = Output::for_command(false);
    std::vector<std::uint32_t> ids;
    for (const auto& text : *jobs) {
      std::uint32_t id = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
      if (ec != std::errc{} || end != text.data() + text.size() || id == 0) {
        out.error("'" + text + "' is not a Slurm job id (a positive number)");
        throw CLI::RuntimeError(kExitBadInput);
      }
      ids.push_back(id);
    }
    auto client = SlurmClient::open();
    if (!client.ok()) {
      out.error(client.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    int code = kExitOk;
    for (std::uint32_t id : ids) {
      if (Status s = (*client)->cancel(id); !s.ok()) {
        out.error(s.message());
        int this_code = s.code() == ErrorCode::not_found ? kExitBadInput : kExitError;
        code = std::max(code, this_code);
        continue;
      }
      out.slurm_cancelled(id);
    }
    if (code != kExitOk) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"slurm-cancel", add_slurm_cancel_command};

}  // namespace
}  // namespace chorus::cli
