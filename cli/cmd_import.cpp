// chorus import wfcommons FILE.json -o wf.yaml: convert a WfCommons trace (WfFormat 1.5 or 1.4)
// into a Chorus workflow whose tasks sleep their recorded runtimes.
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "workflows/wfcommons_export.hpp"
#include "workflows/wfcommons_reader.hpp"

namespace chorus::cli {
namespace {

void add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "Convert a workflow from another format");
  cmd->require_subcommand(1);
  auto* wf =
      cmd->add_subcommand("wfcommons", "Convert a WfCommons instance (WfFormat 1.4/1.5 JSON)");
  struct Args {
    std::string file;
    std::string out;
  };
  auto a = std::make_shared<Args>();
  wf->add_option("file", a->file, "The WfCommons JSON instance")->required();
  wf->add_option("-o,--output", a->out, "The Chorus workflow YAML to write")->required();
  wf->callback([a] {
    const Output out = Output::for_command(false);
    auto inst = read_wfcommons_file(a->file);
    if (!inst.ok()) {
      out.error(inst.status().message());
      throw CLI::RuntimeError(kExitBadInput);
    }
    if (Status s = write_wfcommons_yaml(inst->graph, a->out); !s.ok()) {
      out.error(s.message());
      throw CLI::RuntimeError(kExitError);
    }
    out.imported(
        {a->file, inst->graph.tasks.size(), inst->edge_count, inst->schema_version, a->out});
  });
}

const CommandRegistrar registrar{"import", add_import_command};

}  // namespace
}  // namespace chorus::cli
