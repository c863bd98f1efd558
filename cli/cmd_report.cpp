// chorus report RUN [-o FILE] [--state DIR]: one self-contained HTML page (Gantt chart of every
// attempt on its cores, utilization over time) built from the journal; prints the file's path.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/serve_client.hpp"
#include "core/units.hpp"
#include "runtime/report/html_report.hpp"

namespace chorus::cli {
namespace {

namespace fs = std::filesystem;

// Writes through a temporary file and a rename, so a reader (a browser reloading the page) never
// sees half a report.
Status write_file(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return io_error("cannot create " + path.parent_path().string() + ": " + ec.message());
  fs::path tmp = path;
  tmp += ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return io_error("cannot write " + tmp.string());
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      return io_error("cannot write " + tmp.string() + " (disk full?)");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return io_error("cannot write " + path.string() + ": " + ec.message());
  }
  return {};
}

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "Write an HTML report of a run (Gantt chart of its tasks, utilization)");
  struct Args {
    std::string run;
    std::string output;
    std::string state_dir;
    std::string server;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("run", a->run, "Run id, a unique prefix, or 'latest'")->required();
  cmd->add_option("-o,--output", a->output,
                  "HTML file to write (default: <state>/runs/RUN/report.html; through a server, "
                  "./RUN.report.html)");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_option("--server", a->server, "A served instance's socket (default: CHORUS_SERVER)");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    if (auto server = chosen_server(a->server, a->state_dir)) {
      // The instance renders it; the file is written here, by this user (default: the current
      // folder, since the instance's state folder is not theirs).
      auto reply = ask_server(*server, {{"op", "report"}, {"run", a->run}, {"mode", "plain"}});
      if (!reply.ok()) {
        out.error(reply.status().message());
        throw CLI::RuntimeError(reply.status().code() == ErrorCode::invalid_argument ? kExitBadInput
                                                                                     : kExitError);
      }
      if (const int code = reply->value("exit", kExitError); code != kExitOk) {
        const std::string e = reply->value("err", "");
        std::fwrite(e.data(), 1, e.size(), stderr);
        throw CLI::RuntimeError(code);
      }
      fs::path path = a->output.empty() ? fs::path(reply->value("run", "run") + ".report.html")
                                        : fs::path(a->output);
      std::error_code ec;
      if (const fs::path absolute = fs::absolute(path, ec); !ec) path = absolute;
      if (Status s = write_file(path, reply->value("html", "")); !s.ok()) {
        out.error(s.message());
        throw CLI::RuntimeError(kExitError);
      }
      out.report_written(path.string());
      return;
    }
    auto [store, run] = open_run_or_exit(a->state_dir, a->run);
    const auto events = events_or_exit(*store, run);
    run.status = effective_status(run);
    HtmlReportOptions options;
    // Attempts with no end yet are drawn up to now for a live run, up to its last update for one
    // whose coordinator is gone.
    options.end_time = run.status == RunStatus::running ? wall_seconds_now() : run.updated;
    const std::string html = render_html_report(run, events, options);

    fs::path path = a->output.empty() ? fs::path(resolve_state_dir(a->state_dir)) / "runs" /
                                            run.id / "report.html"
                                      : fs::path(a->output);
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    if (!ec) path = absolute;
    if (Status s = write_file(path, html); !s.ok()) {
      out.error(s.message());
      throw CLI::RuntimeError(kExitError);
    }
    out.report_written(path.string());
  });
}

const CommandRegistrar registrar{"report", add_report_command};

}  // namespace
}  // namespace chorus::cli
