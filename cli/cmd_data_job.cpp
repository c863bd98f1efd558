// chorus data-job: the test bed's data-intensive job. Fetches --input bytes from a data server
// (GET), burns --cpu CPU-seconds (a busy loop measured in this process's CPU time, so a node
// under a CPU quota takes longer in wall time), pushes --output bytes (PUT), and prints what it
// did and how long each phase took. Speaks runtime/netprobe/data_protocol.hpp through
// DataClient. A store that cannot be reached (or that goes silent for --timeout) fails the job
// with a message naming it: exit 3; bad arguments exit 2.
//
//   chorus data-job --from HOST:PORT --input 64MB --cpu 2s --to HOST:PORT --output 16MB [--json]
//
// Sizes are data sizes as in workflow files: decimal K/M/G/T (64MB = 64e6 bytes), binary
// KiB/MiB/GiB/TiB, a bare number is bytes.
#include <time.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "core/units.hpp"
#include "runtime/netprobe/data_client.hpp"
#include "runtime/netprobe/data_protocol.hpp"

namespace chorus::cli {
namespace {

struct Args {
  std::string from, to, input = "0", output = "0", cpu = "0";
  std::string timeout = "10s";
  bool json = false;
};

// The data-size syntax of workflow files (core/units: parse_data_bytes), capped at what one
// transfer of the data-server protocol may carry.
Result<std::uint64_t> parse_size(const std::string& text) {
  auto bytes = parse_data_bytes(text);
  if (!bytes.ok()) return bytes.status();
  if (*bytes > netprobe::kMaxTransfer) {
    return Status(ErrorCode::invalid_argument, "'" + text + "' is more than one transfer allows");
  }
  return *bytes;
}

Result<std::pair<std::string, int>> parse_endpoint(const std::string& option,
                                                   const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status(ErrorCode::invalid_argument, option + " '" + text + "': expected HOST:PORT");
  }
  int port = 0;
  try {
    std::size_t used = 0;
    port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port <= 0 || port > 65535) {
    return Status(ErrorCode::invalid_argument,
                  option + " '" + text + "': the port must be 1..65535");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, port);
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Spins until this process has used `seconds` of CPU time; returns a value the optimiser
// cannot drop.
std::uint64_t burn_cpu(double seconds) {
  const double until = cpu_seconds() + seconds;
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  while (cpu_seconds() < until) {
    for (int i = 0; i < 20000; ++i) {  // ~50 us between clock reads
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
  }
  return x;
}

struct Phase {
  double seconds = 0;
  std::uint64_t bytes = 0;
};

[[noreturn]] void fail(const Output& out, int code, const std::string& message) {
  out.error("data-job: " + message);
  throw CLI::RuntimeError(code);
}

Phase transfer(const Output& out, const std::string& option, const std::string& where,
               std::uint64_t bytes, bool get, Duration timeout) {
  auto ep = parse_endpoint(option, where);
  if (!ep.ok()) fail(out, kExitBadInput, ep.status().message());
  const double t0 = wall_seconds();
  auto client = netprobe::DataClient::connect(ep->first, ep->second, timeout);
  if (!client.ok()) {
    fail(out, kExitError,
         "cannot reach the store " + where + " (" + option + "): " + client.status().message());
  }
  client->set_timeout(timeout);
  auto r = get ? client->get(bytes) : client->put(bytes);
  if (!r.ok()) {
    fail(out, kExitError,
         std::string(get ? "fetching " : "pushing ") + std::to_string(bytes) + " bytes " +
             (get ? "from " : "to ") + where + " failed: " + r.status().message());
  }
  return {wall_seconds() - t0, r->bytes};
}

std::string rate(const Phase& p) {
  if (p.bytes == 0 || p.seconds <= 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.1f Mbit/s)",
                static_cast<double>(p.bytes) * 8 / p.seconds / 1e6);
  return buf;
}

void run_job(const Args& a) {
  const Output out = Output::for_command(a.json);
  auto input = parse_size(a.input);
  if (!input.ok()) fail(out, kExitBadInput, "--input " + input.status().message());
  auto output = parse_size(a.output);
  if (!output.ok()) fail(out, kExitBadInput, "--output " + output.status().message());
  auto cpu = parse_duration(a.cpu);
  if (!cpu.ok()) fail(out, kExitBadInput, "--cpu '" + a.cpu + "': " + cpu.status().message());
  auto timeout = parse_duration(a.timeout);
  if (!timeout.ok() || timeout->count() <= 0) {
    fail(out, kExitBadInput, "--timeout '" + a.timeout + "': expected a positive duration");
  }
  if (*input > 0 && a.from.empty()) fail(out, kExitBadInput, "--input needs --from HOST:PORT");
  if (*output > 0 && a.to.empty()) fail(out, kExitBadInput, "--output needs --to HOST:PORT");

  const double start = wall_seconds();
  Phase fetch, compute, push;
  if (*input > 0) fetch = transfer(out, "--from", a.from, *input, true, *timeout);
  const double cpu_s = std::chrono::duration<double>(*cpu).count();
  const double cpu0 = cpu_seconds(), c0 = wall_seconds();
  std::uint64_t sink = 0;
  if (cpu_s > 0) sink = burn_cpu(cpu_s);
  compute.seconds = wall_seconds() - c0;
  const double cpu_used = cpu_seconds() - cpu0;
  if (*output > 0) push = transfer(out, "--to", a.to, *output, false, *timeout);
  const double total = wall_seconds() - start;

  if (out.json()) {
    nlohmann::ordered_json j;
    j["from"] = a.from;
    j["input_bytes"] = fetch.bytes;
    j["fetch_s"] = fetch.seconds;
    j["cpu_s"] = cpu_used;
    j["compute_s"] = compute.seconds;
    j["to"] = a.to;
    j["output_bytes"] = push.bytes;
    j["push_s"] = push.seconds;
    j["total_s"] = total;
    j["check"] = sink & 0xff;  // the burn loop's result, so it is not optimised away
    out.json_document(j, -1);
  } else {
    std::FILE* f = out.out();
    if (*input > 0) {
      std::fprintf(f, "fetched %llu bytes from %s in %.3f s%s\n",
                   static_cast<unsigned long long>(fetch.bytes), a.from.c_str(), fetch.seconds,
                   rate(fetch).c_str());
    }
    if (cpu_s > 0) {
      std::fprintf(f, "burned %.3f CPU-seconds in %.3f s (check %llu)\n", cpu_used, compute.seconds,
                   static_cast<unsigned long long>(sink & 0xff));
    }
    if (*output > 0) {
      std::fprintf(f, "pushed %llu bytes to %s in %.3f s%s\n",
                   static_cast<unsigned long long>(push.bytes), a.to.c_str(), push.seconds,
                   rate(push).c_str());
    }
    std::fprintf(f, "total %.3f s\n", total);
  }
  out.flush();
}

void add_data_job_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "data-job", "A test job: fetch bytes from a data server, burn CPU time, push bytes");
  auto args = std::make_shared<Args>();
  cmd->add_option("--from", args->from, "HOST:PORT of the data server to fetch from");
  cmd->add_option("--input", args->input, "Bytes to fetch (64MB = 64e6, 64MiB, bare = bytes)")
      ->default_str("0");
  cmd->add_option("--cpu", args->cpu, "CPU time to burn on one core (2s, 500ms)")->default_str("0");
  cmd->add_option("--to", args->to, "HOST:PORT of the data server to push to");
  cmd->add_option("--output", args->output, "Bytes to push")->default_str("0");
  cmd->add_option("--timeout", args->timeout,
                  "Fail when a store accepts or sends nothing for this long")
      ->default_str("10s");
  cmd->add_flag("--json", args->json, "One JSON line with the phases' times");
  cmd->callback([args] { run_job(*args); });
}

const CommandRegistrar registrar{"data-job", add_data_job_command};

}  // namespace
}  // namespace chorus::cli
