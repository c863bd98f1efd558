// chorus serve with real processes: the instance as root, two real Unix users made here
// (useradd), submissions through the real CLI over the Unix socket, SIGKILL and restart, many
// concurrent clients, malformed requests on the socket itself.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "runtime/store/state_store.hpp"
#include "runtime/transport/local_socket.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

// A Unix user made for one test case, removed with its files when the case ends.
class TestUser {
 public:
  explicit TestUser(const std::string& suffix)
      : name_("chs" + std::to_string(::getpid() % 100000) + suffix) {
    auto r = run_process({"useradd", "--no-create-home", "--shell", "/bin/sh", name_}, "/");
    REQUIRE_MESSAGE(r.exit_code == 0, "useradd " << name_ << ": " << r.err);
    auto id = run_process({"id", "-u", name_}, "/");
    uid_ = std::stoul(id.out);
    gid_ = std::stoul(run_process({"id", "-g", name_}, "/").out);
  }
  ~TestUser() { (void)run_process({"userdel", "--force", name_}, "/"); }
  const std::string& name() const { return name_; }
  unsigned uid() const { return uid_; }
  // A folder of its own under `parent` (which must be reachable by it).
  std::string home_in(const std::string& parent) const {
    const std::string dir = parent + "/" + name_;
    ::mkdir(dir.c_str(), 0700);
    REQUIRE(::chown(dir.c_str(), uid_, gid_) == 0);
    return dir;
  }
  // The chorus binary run as this user.
  // HOME is `cwd`; `env` adds to it.
  ProcessResult chorus(const std::vector<std::string>& args, const std::string& cwd,
                       std::map<std::string, std::string> env = {}) const {
    std::vector<std::string> argv{
        "setpriv",       "--reuid", std::to_string(uid_), "--regid", std::to_string(gid_),
        "--init-groups", "--",      chorus_bin()};
    argv.insert(argv.end(), args.begin(), args.end());
    env["HOME"] = cwd;
    env["USER"] = name_;
    return run_process(argv, cwd, env);
  }
  void write(const std::string& path, const std::string& text) const {
    write_file(path, text);
    REQUIRE(::chown(path.c_str(), uid_, gid_) == 0);
  }

 private:
  std::string name_;
  unsigned uid_ = 0, gid_ = 0;
};

// `chorus serve` on a state folder of its own, stopped (SIGTERM, then SIGKILL) at the end.
class Served {
 public:
  Served(const TempDir& dir, std::vector<std::string> extra = {}) : dir_(dir.path()) {
    ::chmod(dir_.c_str(), 0755);  // the users reach their folders and the socket through it
    state_ = dir_ + "/state";
    extra_ = std::move(extra);
    start();
  }
  ~Served() { stop(SIGTERM); }
  void start() {
    std::vector<std::string> argv{chorus_bin(), "serve", "--state", state_};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    pid_ = start_process(argv, dir_);
    REQUIRE_MESSAGE(eventually([&] { return log().find("listening on") != std::string::npos; }, 30),
                    log());
  }
  // Returns the exit code.
  int stop(int signal_number) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal_number);
    int code = wait_process(pid_);
    pid_ = -1;
    return code;
  }
  void signal(int signal_number) const { ::kill(pid_, signal_number); }
  std::string socket() const { return state_ + "/serve.sock"; }
  const std::string& state() const { return state_; }
  std::string log() const { return read_file(dir_ + "/bg.err"); }

 private:
  std::string dir_, state_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
};

ProcessResult as_root(const Served& s, std::vector<std::string> args, const std::string& cwd) {
  args.push_back("--server");
  args.push_back(s.socket());
  return run_chorus(args, cwd);
}

ProcessResult as_user(const TestUser& u, const Served& s, std::vector<std::string> args,
                      const std::string& cwd) {
  args.push_back("--server");
  args.push_back(s.socket());
  return u.chorus(args, cwd);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The run's status word through the server, as `who` (nullptr: root).
std::string run_status(const Served& s, const std::string& run, const TestUser* who,
                       const std::string& cwd) {
  std::vector<std::string> args{"status", run, "--json"};
  auto r = who != nullptr ? as_user(*who, s, args, cwd) : as_root(s, args, cwd);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_object() || !j.contains("status")) return "";
  return j["status"].get<std::string>();
}

// Whether something listens on 127.0.0.1:`port`.
bool listening(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return up;
}

bool root_or_skip() {
  if (::geteuid() == 0) return true;
  MESSAGE("skipped: needs root (useradd, tasks run as their submitters)");
  return false;
}

}  // namespace

TEST_CASE("Integration.Serve.UsersSeeOnlyTheirOwnRuns") {
  if (!root_or_skip()) return;
  TempDir dir;
  TestUser alice("a"), bob("b"), admin("m");
  write_file(dir / "serve.yaml", "admins: {users: [" + admin.name() + "]}\n");
  Served served(dir, {"--config", dir / "serve.yaml"});
  const std::string ahome = alice.home_in(dir.path()), bhome = bob.home_in(dir.path());
  const std::string mhome = admin.home_in(dir.path());
  const std::string wf = "name: mine\ntasks:\n  - name: who\n    command: \"id -u > who.txt\"\n";
  alice.write(ahome + "/wf.yaml", wf);
  bob.write(bhome + "/wf.yaml", wf);

  auto a = as_user(alice, served, {"submit", "wf.yaml"}, ahome);
  REQUIRE_MESSAGE(a.exit_code == 0, a.err);
  auto b = as_user(bob, served, {"submit", "wf.yaml"}, bhome);
  REQUIRE_MESSAGE(b.exit_code == 0, b.err);
  const std::string arun = trimmed(a.out), brun = trimmed(b.out);
  CHECK(arun != brun);
  REQUIRE(eventually([&] { return run_status(served, arun, &alice, ahome) == "succeeded"; }));
  REQUIRE(eventually([&] { return run_status(served, brun, &bob, bhome) == "succeeded"; }));

  // Each task ran as its submitter, in the submitter's folder.
  CHECK(trimmed(read_file(ahome + "/who.txt")) == std::to_string(alice.uid()));
  CHECK(trimmed(read_file(bhome + "/who.txt")) == std::to_string(bob.uid()));
  struct stat st {};
  REQUIRE(::stat((ahome + "/who.txt").c_str(), &st) == 0);
  CHECK(st.st_uid == alice.uid());

  // Lists: each their own; root and the config's admin all.
  auto alist = as_user(alice, served, {"list", "--json"}, ahome);
  REQUIRE(alist.exit_code == 0);
  CHECK(alist.out.find(arun) != std::string::npos);
  CHECK(alist.out.find(brun) == std::string::npos);
  auto blist = as_user(bob, served, {"list", "--json"}, bhome);
  CHECK(blist.out.find(brun) != std::string::npos);
  CHECK(blist.out.find(arun) == std::string::npos);
  auto rlist = as_root(served, {"list", "--json"}, dir.path());
  CHECK(rlist.out.find(arun) != std::string::npos);
  CHECK(rlist.out.find(brun) != std::string::npos);
  auto mlist = as_user(admin, served, {"list", "--json"}, mhome);
  CHECK(mlist.out.find(arun) != std::string::npos);
  CHECK(mlist.out.find(brun) != std::string::npos);

  // Bob cannot read, follow or cancel Alice's run; the message says why.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"status", arun}, {"logs", arun, "who"}, {"cancel", arun}}) {
    auto r = as_user(bob, served, args, bhome);
    CHECK_MESSAGE(r.exit_code == 2, args[0] << ": " << r.out << r.err);
    CHECK(r.err.find("no run '" + arun + "' of yours") != std::string::npos);
  }
  auto own = as_user(alice, served, {"logs", arun, "who"}, ahome);
  CHECK(own.exit_code == 0);
  // Her report, rendered by the instance, written by her in her folder.
  auto report = as_user(alice, served, {"report", arun}, ahome);
  CHECK_MESSAGE(report.exit_code == 0, report.err);
  CHECK(read_file(ahome + "/" + arun + ".report.html").find("<html") != std::string::npos);
  auto by_admin = as_user(admin, served, {"status", arun}, mhome);
  CHECK_MESSAGE(by_admin.exit_code == 0, by_admin.err);

  // `chorus list --state` of the served folder goes through the server (alice's runs only); the
  // journal files themselves are not readable by the users.
  auto through = alice.chorus({"list", "--json", "--state", served.state()}, ahome);
  CHECK_MESSAGE(through.exit_code == 0, through.err);
  CHECK(through.out.find(brun) == std::string::npos);
  for (const char* file : {"/chorus.db", "/serve.db"}) {
    auto peek = run_process(
        {"setpriv", "--reuid", std::to_string(alice.uid()), "--regid", std::to_string(alice.uid()),
         "--clear-groups", "--", "/bin/cat", served.state() + file},
        ahome);
    CHECK_MESSAGE(peek.exit_code != 0, file << " read by a user: " << peek.out.size() << " bytes");
  }
}

// The order in which one core starts Alice's 8 tasks and Bob's 4 (submitted after hers) under
// `config`: root's gate holds the core until both have submitted, then each task appends its
// letter to a shared file.
std::string start_order(const std::string& config) {
  TempDir dir;
  TestUser alice("a"), bob("b");
  write_file(dir / "serve.yaml", "cores: 1\n" + config);
  std::string text = read_file(dir / "serve.yaml");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"ALICE", alice.name()},
                                 std::pair<std::string, std::string>{"BOB", bob.name()}}) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from)) {
      text.replace(at, from.size(), to);
    }
  }
  write_file(dir / "serve.yaml", text);
  Served served(dir, {"--config", dir / "serve.yaml"});
  const std::string shared = dir / "shared";
  ::mkdir(shared.c_str(), 0777);
  ::chmod(shared.c_str(), 0777);
  write_file(shared + "/order.log", "");
  ::chmod((shared + "/order.log").c_str(), 0666);
  write_file(dir / "gate.yaml", "name: gate\ntasks:\n  - name: wait\n    command: \"while [ ! -e " +
                                    shared + "/open ]; do sleep 0.05; done\"\n");
  auto g = as_root(served, {"submit", "gate.yaml"}, dir.path());
  REQUIRE_MESSAGE(g.exit_code == 0, g.err);
  REQUIRE(eventually(
      [&] { return run_status(served, trimmed(g.out), nullptr, dir.path()) == "running"; }));
  std::vector<std::pair<std::string, std::string>> runs;  // run id, home
  auto flood = [&](const TestUser& u, char letter, int tasks) {
    const std::string home = u.home_in(dir.path());
    u.write(home + "/wf.yaml", "name: flood\ntasks:\n  - name: t\n    foreach: {i: \"range(0, " +
                                   std::to_string(tasks) +
                                   ")\"}\n    estimate: 1s\n    command: \"echo " +
                                   std::string(1, letter) + " >> " + shared + "/order.log\"\n");
    auto r = as_user(u, served, {"submit", "wf.yaml"}, home);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    runs.emplace_back(trimmed(r.out), home);
  };
  flood(alice, 'A', 8);
  flood(bob, 'B', 4);
  write_file(shared + "/open", "");
  const TestUser* owners[] = {&alice, &bob};
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::string run = runs[k].first, home = runs[k].second;
    const TestUser* who = owners[k];
    REQUIRE(eventually([&] { return run_status(served, run, who, home) == "succeeded"; }, 60));
  }
  std::string order;
  for (const std::string& line : read_lines(shared + "/order.log")) order += line;
  return order;
}

TEST_CASE("Integration.Serve.UwfqOrdersEveryUsersTasksTogether") {
  if (!root_or_skip()) return;
  // UWFQ sees both users' ready tasks together. Equal weights: Bob's smaller backlog (4 s of
  // declared work against Alice's 8 s) ends first in the fair fluid system, so his tasks overtake
  // hers although he submitted later (FIFO would start Alice's 8 first).
  const std::string equal = start_order("");
  INFO("equal weights: " << equal);
  REQUIRE(equal.size() == 12);
  CHECK(equal.substr(0, 4) == "BBBB");
  // Alice weighs 3: her 8 s at 3/4 of the core (10.7 s) end before Bob's 4 s at 1/4 (16 s).
  const std::string weighted = start_order("weights: {users: {ALICE: 3}}\n");
  INFO("alice weighs 3: " << weighted);
  REQUIRE(weighted.size() == 12);
  CHECK(weighted.substr(0, 8) == "AAAAAAAA");
}

TEST_CASE("Integration.Serve.SigkillAndRestartRunNoFinishedTaskTwice") {
  if (!root_or_skip()) return;
  TempDir dir;
  Served served(dir);
  // first -> slow (killed mid-run) -> last; each appends a line when it has finished.
  write_file(dir / "wf.yaml", R"Y(name: chain
tasks:
  - name: first
    command: "echo done >> first.count"
  - name: slow
    command: "echo start >> slow.starts; sleep 2; echo done >> slow.count"
    after: [first]
  - name: last
    command: "echo done >> last.count"
    after: [slow]
)Y");
  auto r = as_root(served, {"submit", "wf.yaml", "--key", "chain-1"}, dir.path());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string run = trimmed(r.out);
  REQUIRE(eventually([&] { return file_exists(dir / "slow.starts"); }, 30));
  CHECK(served.stop(SIGKILL) == 128 + SIGKILL);
  // As if the instance had been killed between creating a run and recording its submission:
  // the run is the instance's (its token) but was never acknowledged.
  std::string unacknowledged;
  {
    auto journal = chorus::open_sqlite_store(served.state() + "/chorus.db");
    REQUIRE(journal.ok());
    chorus::RunInfo info;
    info.workflow_name = "never-acknowledged";
    info.status = chorus::RunStatus::running;
    info.token = trimmed(read_file(served.state() + "/serve.token"));
    auto created = (*journal)->create_run(info);
    REQUIRE(created.ok());
    unacknowledged = created->id;
  }

  served.start();
  {
    auto journal = chorus::open_sqlite_store(served.state() + "/chorus.db");
    REQUIRE(journal.ok());
    CHECK((*journal)->find_run(unacknowledged)->status == chorus::RunStatus::failed);
  }
  // The same key after the crash: the same run, not a second one.
  auto again = as_root(served, {"submit", "wf.yaml", "--key", "chain-1", "--json"}, dir.path());
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  auto j = nlohmann::json::parse(again.out);
  CHECK(j["run"] == run);
  CHECK(j["again"] == true);
  REQUIRE(eventually([&] { return run_status(served, run, nullptr, dir.path()) == "succeeded"; }));
  CHECK(read_lines(dir / "first.count").size() == 1);
  CHECK(read_lines(dir / "slow.count").size() == 1);
  CHECK(read_lines(dir / "last.count").size() == 1);
  CHECK(read_lines(dir / "slow.starts").size() == 2);  // killed once mid-run, then run again
  auto list = as_root(served, {"list", "--json"}, dir.path());
  CHECK(std::count(list.out.begin(), list.out.end(), '{') >= 1);
  CHECK(list.out.find(run) != std::string::npos);
}

TEST_CASE("Integration.Serve.ThousandSubmissionsFromTenClients") {
  if (!root_or_skip()) return;
  TempDir dir;
  Served served(dir);
  write_file(dir / "wf.yaml", "name: tiny\ntasks:\n  - name: t\n    command: [/bin/true]\n");
  // Ten clients at once, a hundred submissions each, every one with its own key.
  std::vector<pid_t> clients;
  for (int c = 0; c < 10; ++c) {
    const std::string script = "fails=0; for j in $(seq 1 100); do " + chorus_bin() +
                               " submit wf.yaml --server " + served.socket() + " --key c" +
                               std::to_string(c) +
                               "-$j >> ids.txt || fails=$((fails+1)); done; exit $fails";
    const std::string sub = dir / ("client" + std::to_string(c));
    ::mkdir(sub.c_str(), 0755);
    write_file(sub + "/wf.yaml", read_file(dir / "wf.yaml"));
    clients.push_back(start_process({"/bin/bash", "-c", script}, sub));
  }
  for (pid_t p : clients) CHECK(wait_process(p) == 0);
  std::vector<std::string> ids;
  for (int c = 0; c < 10; ++c) {
    for (auto& line : read_lines(dir / ("client" + std::to_string(c)) + "/ids.txt")) {
      ids.push_back(line);
    }
  }
  REQUIRE(ids.size() == 1000);
  std::sort(ids.begin(), ids.end());
  CHECK(std::unique(ids.begin(), ids.end()) == ids.end());

  // Every one accepted is in the journal and finishes.
  auto all_succeeded = [&] {
    auto r = as_root(served, {"list", "--json"}, dir.path());
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (!j.is_array() || j.size() != 1000) return false;
    return std::all_of(j.begin(), j.end(), [](const nlohmann::json& run) {
      return run.value("status", "") == "succeeded";
    });
  };
  CHECK(eventually(all_succeeded, 240));
  // A retried key is the same run, not the 1,001st.
  auto again = as_root(served, {"submit", "client3/wf.yaml", "--key", "c3-7"}, dir.path());
  CHECK(again.exit_code == 0);
  CHECK(std::binary_search(ids.begin(), ids.end(), trimmed(again.out)));
}

TEST_CASE("Integration.Serve.MalformedRequestsGetAnErrorAndTheServerStaysUp") {
  if (!root_or_skip()) return;
  TempDir dir;
  Served served(dir);
  // Raw garbage on the socket (not even ZeroMQ's handshake).
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", served.socket().c_str());
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    std::mt19937 random(7);
    std::string junk(5000, '\0');
    for (char& ch : junk) ch = static_cast<char>(random());
    (void)!::write(fd, junk.data(), junk.size());
    ::close(fd);
  }
  auto client = chorus::LocalClientSocket::connect(served.socket());
  REQUIRE(client.ok());
  auto ask = [&](const std::string& request) {
    auto reply = (*client)->request(request, 10000);
    REQUIRE_MESSAGE(reply.ok(), reply.status().message());
    auto j = nlohmann::json::parse(*reply, nullptr, false);
    REQUIRE(j.is_object());
    return j;
  };
  auto not_json = ask("\x01\x02 this is not json {");
  CHECK(not_json["exit"] == 2);
  CHECK(not_json["err"].get<std::string>().find("one JSON object") != std::string::npos);
  auto no_op = ask(R"({"run": "x"})");
  CHECK(no_op["exit"] == 2);
  auto unknown = ask(R"({"op": "format-disk"})");
  CHECK(unknown["exit"] == 2);
  CHECK(unknown["err"].get<std::string>().find("unknown request") != std::string::npos);
  auto wrong_type = ask(R"({"op": "submit", "text": 42, "cwd": "/tmp", "path": "/x.yaml"})");
  CHECK(wrong_type["exit"] == 2);
  // A frame of 20 MiB: refused with a message, not dropped.
  auto huge = ask(R"({"op": "submit", "text": ")" + std::string(20 << 20, 'x') + "\"}");
  CHECK(huge["exit"] == 2);
  CHECK(huge["err"].get<std::string>().find("refused") != std::string::npos);

  // A workflow that does not parse: the client sees file:line:col.
  write_file(dir / "bad.yaml", "name: bad\ntasks:\n  - name: a\n    comand: [/bin/true]\n");
  auto bad = as_root(served, {"submit", "bad.yaml"}, dir.path());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bad.yaml:4:5: unknown key 'comand'") != std::string::npos);

  // Still serving.
  auto ping = ask(R"({"op": "ping"})");
  CHECK(ping["exit"] == 0);
  write_file(dir / "ok.yaml", "name: ok\ntasks:\n  - name: a\n    command: [/bin/true]\n");
  auto ok = as_root(served, {"submit", "ok.yaml"}, dir.path());
  CHECK_MESSAGE(ok.exit_code == 0, ok.err);

  // A task whose output is not UTF-8: its log is read through the server (the bytes replaced),
  // and the server stays up (a reply it could not encode used to end it).
  write_file(dir / "binary.yaml",
             "name: binary\ntasks:\n  - name: b\n    command: printf 'x\\367\\377y'\n");
  auto bin = as_root(served, {"submit", "binary.yaml"}, dir.path());
  REQUIRE_MESSAGE(bin.exit_code == 0, bin.err);
  const std::string bin_run = trimmed(bin.out);
  REQUIRE(
      eventually([&] { return run_status(served, bin_run, nullptr, dir.path()) == "succeeded"; }));
  auto log = as_root(served, {"logs", bin_run, "b"}, dir.path());
  INFO(log.out, log.err);
  CHECK(log.exit_code == 0);
  CHECK(log.out.find("x\xEF\xBF\xBD\xEF\xBF\xBDy") != std::string::npos);
  CHECK(ask(R"({"op": "ping"})")["exit"] == 0);
}

TEST_CASE("Integration.Serve.LimitsRefuseClearlyAndCapRunningCores") {
  if (!root_or_skip()) return;
  TempDir dir;
  TestUser alice("a");
  write_file(dir / "serve.yaml", R"Y(cores: 4
limits:
  default: {queued_tasks: 3, running_cores: 1}
)Y");
  Served served(dir, {"--config", dir / "serve.yaml"});
  const std::string home = alice.home_in(dir.path());
  // Two tasks that may not overlap under running_cores: 1 (each holds a lock folder), the first
  // held until the test says go, so the second submission meets them still there however slow
  // the machine (a `sleep 1` was not enough in the sanitized build under load).
  alice.write(home + "/pair.yaml", R"Y(name: pair
tasks:
  - name: t
    foreach: {i: "range(0, 2)"}
    command: "mkdir lock && while [ ! -e go ]; do sleep 0.1; done && rmdir lock && echo {i} >> done.txt"
)Y");
  auto pair = as_user(alice, served, {"submit", "pair.yaml"}, home);
  REQUIRE_MESSAGE(pair.exit_code == 0, pair.err);
  // Two more tasks would make 4 queued or running, past queued_tasks: 3.
  auto over = as_user(alice, served, {"submit", "pair.yaml"}, home);
  CHECK(over.exit_code == 2);
  CHECK_MESSAGE(over.err.find("past the limit of 3 (queued_tasks, " + dir.path() +
                              "/serve.yaml:3:13)") != std::string::npos,
                over.err);
  // A task that can never fit the running_cores limit.
  alice.write(home + "/wide.yaml",
              "name: wide\ntasks:\n  - name: w\n    cores: 2\n    command: "
              "[/bin/true]\n");
  auto wide = as_user(alice, served, {"submit", "wide.yaml"}, home);
  CHECK(wide.exit_code == 2);
  CHECK(wide.err.find("asks for 2 cores") != std::string::npos);
  const std::string run = trimmed(pair.out);
  write_file(home + "/go", "");
  REQUIRE(eventually([&] {
    auto s = run_status(served, run, &alice, home);
    return s == "succeeded" || s == "failed";
  }));
  CHECK(run_status(served, run, &alice, home) == "succeeded");  // never two at once
  CHECK(read_lines(home + "/done.txt").size() == 2);
  // Both ended: room again.
  auto later = as_user(alice, served, {"submit", "pair.yaml"}, home);
  CHECK_MESSAGE(later.exit_code == 0, later.err);
}

// No --server, no CHORUS_SERVER and no instance in the state folder: the message says where it
// looked, so an instance started with --state elsewhere is one flag away.
TEST_CASE("Integration.Serve.SubmitWithoutAnInstanceSaysWhereItLooked") {
  TempDir dir;
  write_file(dir / "wf.yaml", "name: lost\ntasks:\n  - name: t\n    command: \"true\"\n");
  ::unsetenv("CHORUS_SERVER");
  auto r = run_chorus({"submit", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find("none at " + dir / ".chorus/serve.sock") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("--state DIR") != std::string::npos, r.err);
  r = run_chorus({"submit", "wf.yaml", "--state", dir / "elsewhere"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find("none at " + dir / "elsewhere/serve.sock") != std::string::npos, r.err);
}

TEST_CASE("Integration.Serve.ConfigErrorsAreLocated") {
  TempDir dir;
  write_file(dir / "serve.yaml", "weights: {users: {alice: -1}}\nlimts: {}\n");
  auto r =
      run_chorus({"serve", "--state", dir / "state", "--config", dir / "serve.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("serve.yaml:1:26: the weight of 'alice' must be a positive number") !=
        std::string::npos);
  CHECK(r.err.find("serve.yaml:2:1: unknown key 'limts' in the serve config (did you mean "
                   "'limits'?)") != std::string::npos);

  // The policies' own options: checked by the policies, located in serve.yaml, before the
  // instance listens.
  write_file(dir / "serve.yaml", "queue: uwfq\npolicy_options: {lane_core: auto}\n");
  r = run_chorus({"serve", "--state", dir / "state", "--config", dir / "serve.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find("serve.yaml:2:18:") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("did you mean 'lane_cores'") != std::string::npos, r.err);
  // uwfq takes 'weights', but serve.yaml holds shares at its top level: not offered here.
  CHECK_MESSAGE(r.err.find("grace, lane_cores, lane_work, of placement") != std::string::npos,
                r.err);
  write_file(dir / "serve.yaml", "queue: uwfq\npolicy_options: {lane_cores: many}\n");
  r = run_chorus({"serve", "--state", dir / "state", "--config", dir / "serve.yaml"}, dir.path());
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find("serve.yaml:2:30:") != std::string::npos, r.err);
  CHECK(!std::filesystem::exists(std::filesystem::path(dir / "state") / "serve.sock"));
}

// serve.yaml's policy_options reach the instance's queue: with uwfq's short-job lane (one core
// kept from a long job's tasks) a short job submitted while a long one fills the cores starts at
// once; without it, it waits for the first long task to end. The same two submissions under
// both instances, so the difference is the option's.
TEST_CASE("Integration.Serve.PolicyOptionsReachTheQueueTheLaneKeepsACoreForAShortJob") {
  if (!root_or_skip()) return;
  auto short_job_delay = [](const std::string& options) {
    TempDir dir;
    write_file(dir / "serve.yaml", "queue: uwfq\ncores: 4\n" + options);
    Served served(dir, {"--config", dir / "serve.yaml"});
    write_file(dir / "long.yaml",
               "name: long\ntasks:\n  - name: part\n    foreach: {i: \"range(0, 8)\"}\n"
               "    command: [sleep, \"4\"]\n    estimate: 4s\n    job: long\n");
    write_file(dir / "short.yaml",
               "name: short\ntasks:\n  - name: quick\n    command: \"date +%s.%N > started.part && "
               "mv started.part started\"\n"
               "    estimate: 0.1s\n    job: short\n");
    auto a = as_root(served, {"submit", "long.yaml"}, dir.path());
    REQUIRE_MESSAGE(a.exit_code == 0, a.err);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double submitted =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto b = as_root(served, {"submit", "short.yaml"}, dir.path());
    REQUIRE_MESSAGE(b.exit_code == 0, b.err);
    // The task writes its start time beside the file and renames it, so "started" appears whole
    // (a shell redirection creates the file empty first; CI once read it in that moment).
    REQUIRE_MESSAGE(eventually([&] { return std::filesystem::exists(dir / "started"); }, 30),
                    served.log());
    return std::stod(read_file(dir / "started")) - submitted;
  };
  const double with_lane = short_job_delay("policy_options: {lane_cores: 1, lane_work: 5}\n");
  const double without = short_job_delay("");
  MESSAGE("short job started " << with_lane << " s after its submission with the lane, " << without
                               << " s without");
  CHECK(with_lane < 1.5);
  CHECK(without > 2.5);  // the long tasks (4 s) started 0.5 s before it held every core
}

TEST_CASE("Integration.Serve.StatusWatchFollowsARunAndCancelWaitsForItsEnd") {
  if (!root_or_skip()) return;
  TempDir dir;
  Served served(dir);
  write_file(dir / "wf.yaml", "name: gated\ntasks:\n  - name: wait\n    command: \"while [ ! -e " +
                                  dir / "open" + " ]; do sleep 0.05; done\"\n");
  auto first = as_root(served, {"submit", "wf.yaml"}, dir.path());
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  const std::string run = trimmed(first.out);
  // The watcher runs until the run ends, then exits with its outcome.
  const std::string watch_dir = dir / "watch";
  ::mkdir(watch_dir.c_str(), 0755);
  const pid_t watcher = start_process(
      {chorus_bin(), "status", run, "--watch", "--interval", "0.2", "--server", served.socket()},
      watch_dir);
  REQUIRE(eventually(
      [&] { return read_file(watch_dir + "/bg.out").find("running") != std::string::npos; }));
  CHECK(process_alive(watcher));
  write_file(dir / "open", "");
  CHECK(wait_process(watcher) == 0);
  const std::string watched = read_file(watch_dir + "/bg.out");
  CHECK(watched.find("succeeded") != std::string::npos);

  // cancel --wait returns once the run has ended, and says so; a watcher then sees it cancelled.
  ::unlink((dir / "open").c_str());
  auto second = as_root(served, {"submit", "wf.yaml"}, dir.path());
  REQUIRE_MESSAGE(second.exit_code == 0, second.err);
  const std::string run2 = trimmed(second.out);
  REQUIRE(eventually([&] { return run_status(served, run2, nullptr, dir.path()) == "running"; }));
  auto cancel = as_root(served, {"cancel", run2, "--wait", "30s"}, dir.path());
  CHECK_MESSAGE(cancel.exit_code == 0, cancel.err);
  CHECK(run_status(served, run2, nullptr, dir.path()) == "cancelled");
  auto after = as_root(served, {"status", run2, "--watch"}, dir.path());
  CHECK(after.exit_code == 130);
}

TEST_CASE("Integration.Serve.TcpClientsNeedTheirOwnListedKey") {
  if (!root_or_skip()) return;
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  TestUser alice("a"), bob("b");
  const std::string ahome = alice.home_in(dir.path()), bhome = bob.home_in(dir.path());
  auto akey = alice.chorus({"keys"}, ahome);
  REQUIRE_MESSAGE(akey.exit_code == 0, akey.err);
  CHECK(akey.err.find("keys: {users: {" + alice.name() + ": [\"") != std::string::npos);
  auto bkey = bob.chorus({"keys"}, bhome);
  REQUIRE_MESSAGE(bkey.exit_code == 0, bkey.err);
  struct stat st {};
  REQUIRE(::stat((ahome + "/.chorus/keys/client.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // Only alice's key is listed.
  write_file(dir / "serve.yaml", "listen: tcp://127.0.0.1:*\nkeys: {users: {" + alice.name() +
                                     ": [\"" + trimmed(akey.out) + "\"]}}\n");
  Served served(dir, {"--config", dir / "serve.yaml"});
  std::string endpoint;
  REQUIRE(eventually([&] {
    const std::string log = served.log();
    const auto at = log.find("listening on tcp://");
    if (at == std::string::npos) return false;
    endpoint = log.substr(at + 13, log.find(' ', at + 13) - (at + 13));
    return true;
  }));
  const std::map<std::string, std::string> server_key{
      {"CHORUS_SERVER_KEY", served.state() + "/serve.pub"}};
  const std::string wf = "name: far\ntasks:\n  - name: who\n    command: \"id -u > who.txt\"\n";
  alice.write(ahome + "/wf.yaml", wf);
  bob.write(bhome + "/wf.yaml", wf);

  // Alice over TCP: her key, the server's key; the run is hers and runs as her.
  auto a = alice.chorus({"submit", "wf.yaml", "--server", endpoint}, ahome, server_key);
  REQUIRE_MESSAGE(a.exit_code == 0, a.err);
  const std::string run = trimmed(a.out);
  REQUIRE(eventually([&] {
    auto r = alice.chorus({"status", run, "--json", "--server", endpoint}, ahome, server_key);
    return r.out.find("\"succeeded\"") != std::string::npos;
  }));
  CHECK(trimmed(read_file(ahome + "/who.txt")) == std::to_string(alice.uid()));

  // Bob with his own key, which the server does not list: refused during the handshake.
  auto unknown = bob.chorus({"list", "--server", endpoint}, bhome, server_key);
  CHECK(unknown.exit_code == 2);
  CHECK_MESSAGE(unknown.err.find("refused this user's key") != std::string::npos, unknown.err);
  // Bob without a key: told what to do.
  auto none = bob.chorus({"list", "--server", endpoint}, bhome,
                         {{"CHORUS_SERVER_KEY", served.state() + "/serve.pub"},
                          {"CHORUS_KEYS", bhome + "/no-keys-here"}});
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("run `chorus keys`") != std::string::npos);
  // Bob with a copy of Alice's key: the key is hers, the request says bob.
  const std::string stolen = bhome + "/stolen";
  ::mkdir(stolen.c_str(), 0700);
  REQUIRE(::chown(stolen.c_str(), bob.uid(), static_cast<gid_t>(-1)) == 0);
  for (const char* f : {"/client.key", "/client.pub"}) {
    bob.write(stolen + f, read_file(ahome + "/.chorus/keys" + f));
    ::chmod((stolen + f).c_str(), 0600);
  }
  auto theft =
      bob.chorus({"status", run, "--server", endpoint}, bhome,
                 {{"CHORUS_SERVER_KEY", served.state() + "/serve.pub"}, {"CHORUS_KEYS", stolen}});
  CHECK(theft.exit_code == 2);
  CHECK_MESSAGE(theft.err.find("this key is " + alice.name() + "'s, not " + bob.name() + "'s") !=
                    std::string::npos,
                theft.err);
  // A wrong server key: no secure connection, said as such.
  auto wrong = alice.chorus({"list", "--server", endpoint}, ahome,
                            {{"CHORUS_SERVER_KEY", trimmed(bkey.out)}});
  CHECK(wrong.exit_code == 2);
  CHECK_MESSAGE(wrong.err.find("no secure connection") != std::string::npos, wrong.err);
  // Plain bytes on the TCP port (no CURVE): dropped; the server still serves Alice.
  {
    const auto colon = endpoint.rfind(':');
    const int port = std::stoi(endpoint.substr(colon + 1));
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    const std::string junk = "GET / HTTP/1.0\r\n\r\n" + std::string(4096, 'x');
    (void)!::write(fd, junk.data(), junk.size());
    ::close(fd);
  }
  auto still = alice.chorus({"list", "--json", "--server", endpoint}, ahome, server_key);
  CHECK_MESSAGE(still.exit_code == 0, still.err);
  CHECK(still.out.find(run) != std::string::npos);

  // Keys changed without a restart (SIGHUP). A config with a mistake changes nothing.
  write_file(dir / "serve.yaml",
             "listen: tcp://127.0.0.1:*\nkeys: {users: {" + bob.name() + ": [\"not a key\"]}}\n");
  served.signal(SIGHUP);
  REQUIRE_MESSAGE(eventually([&] {
                    return served.log().find("the keys stay as they were") != std::string::npos;
                  }),
                  served.log());
  CHECK(alice.chorus({"list", "--server", endpoint}, ahome, server_key).exit_code == 0);
  CHECK(bob.chorus({"list", "--server", endpoint}, bhome, server_key).exit_code == 2);
  // Bob's key instead of Alice's: he is admitted, she is refused at her next connection.
  write_file(dir / "serve.yaml", "listen: tcp://127.0.0.1:*\nkeys: {users: {" + bob.name() +
                                     ": [\"" + trimmed(bkey.out) + "\"]}}\n");
  served.signal(SIGHUP);
  REQUIRE_MESSAGE(
      eventually([&] { return served.log().find("admitted from now on") != std::string::npos; }),
      served.log());
  auto bob_now = bob.chorus({"list", "--server", endpoint}, bhome, server_key);
  CHECK_MESSAGE(bob_now.exit_code == 0, bob_now.err);
  auto alice_now = alice.chorus({"list", "--server", endpoint}, ahome, server_key);
  CHECK(alice_now.exit_code == 2);
  CHECK_MESSAGE(alice_now.err.find("refused this user's key") != std::string::npos, alice_now.err);
}

// A served run with a repeat group whose sweep is a quorum round: each round closes on its 4
// fastest of 6 members and drops the 2 slow ones, the rounds go on until `until:` or
// max_rounds, as under chorus run. The instance killed after round 1 resumes at round 2: no
// round's merge runs twice.
TEST_CASE("Integration.Serve.RepeatGroupsWithQuorumRoundsRunAndResume") {
  if (!root_or_skip()) return;
  TempDir dir;
  Served served(dir, {"--cores", "6"});
  std::filesystem::create_directories(dir / "out");
  write_file(dir / "wf.yaml", R"Y(name: served-rounds
tasks:
  - repeat: ens
    max_rounds: 3
    until: {file: "quorum/ens/round-{round}.json", key: /used, below: 4}
    tasks:
      - name: sim
        foreach: {d: ["0.1", "0.2", "0.3", "0.4", "30", "40"]}
        command: "sleep {d} && touch out/{round}-{d}"
        quorum: {policy: static, n: 6, k: 4}
      - name: merge
        after: [sim]
        command: "echo {round} >> merges; cp \"$CHORUS_QUORUM_FILE\" merged-{round}.json; [ {round} != 1 ] || sleep 3"
  - name: report
    after: [ens]
    command: "cat merged-*.json > all.json"
)Y");
  auto r = as_root(served, {"submit", "wf.yaml"}, dir.path());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string run = trimmed(r.out);
  // Round 1's merge is running (it sleeps): the instance dies outright.
  REQUIRE_MESSAGE(eventually([&] { return file_exists(dir / "merged-1.json"); }, 60), served.log());
  CHECK(served.stop(SIGKILL) == 128 + SIGKILL);
  served.start();
  REQUIRE_MESSAGE(
      eventually([&] { return run_status(served, run, nullptr, dir.path()) == "succeeded"; }, 120),
      served.log());
  // Round 1's merge was killed mid-run and ran again; rounds 2 and 3 once each.
  CHECK(read_lines(dir / "merges") == std::vector<std::string>{"1", "1", "2", "3"});
  for (int round = 1; round <= 3; ++round) {
    const std::string R = std::to_string(round);
    CHECK(file_exists(dir / ("out/" + R + "-0.4")));
    CHECK_FALSE(file_exists(dir / ("out/" + R + "-30")));
    CHECK(read_file(dir / ("merged-" + R + ".json")).find("\"used\": 4") != std::string::npos);
  }
  CHECK(file_exists(dir / "all.json"));
  auto status = as_root(served, {"status", run, "--tasks"}, dir.path());
  INFO(status.out, status.err);
  CHECK(status.out.find("dropped by quorum: round 2 of 'ens' closed with 4 of 6") !=
        std::string::npos);
  CHECK(status.out.find("23 total: 17 succeeded") != std::string::npos);
}

// A workflow's services in a served run: up before the tasks that use them, their endpoints
// through `chorus endpoints --server`, each run its own; stopped once the run's other tasks have
// ended (the run then succeeds), resumed after a SIGKILL of the instance (the killed instance's
// replica does not hold the port), and stopped with a cancelled run.
TEST_CASE("Integration.Serve.WorkflowServicesRunWithTheirRunAndStopWithIt") {
  if (!root_or_skip()) return;
  TempDir dir;
  Served served(dir, {"--cores", "4"});
  const std::string echo = binary_dir() + "/tests/svc_echo";
  // A run whose client writes what it got and then waits for `gate`.
  auto workflow = [&](const std::string& name, int port, const std::string& gate) {
    return "name: " + name + R"Y(
services:
  - name: echo
    command: [)Y" +
           echo + R"Y(, "{port}"]
    ready: {tcp: )Y" +
           std::to_string(port) + R"Y(, timeout: 20s}
tasks:
  - name: client
    uses: [echo]
    command: "echo \"$CHORUS_SERVICE_ECHO\" >> )Y" +
           name + R"Y(.env; while [ ! -e )Y" + gate +
           R"Y( ]; do sleep 0.05; done"
  - name: after
    after: [client]
    command: "echo done >> )Y" +
           name + R"Y(.after"
)Y";
  };
  const int pa = 23961, pb = 23971;
  write_file(dir / "a.yaml", workflow("a", pa, "a.go"));
  write_file(dir / "b.yaml", workflow("b", pb, "b.go"));
  auto ra = as_root(served, {"submit", "a.yaml"}, dir.path());
  auto rb = as_root(served, {"submit", "b.yaml"}, dir.path());
  REQUIRE_MESSAGE(ra.exit_code == 0, ra.err);
  REQUIRE_MESSAGE(rb.exit_code == 0, rb.err);
  const std::string a = trimmed(ra.out), b = trimmed(rb.out);
  REQUIRE_MESSAGE(
      eventually([&] { return file_exists(dir / "a.env") && file_exists(dir / "b.env"); }, 30),
      served.log());
  CHECK(read_lines(dir / "a.env") == std::vector<std::string>{"127.0.0.1:23961"});
  CHECK(read_lines(dir / "b.env") == std::vector<std::string>{"127.0.0.1:23971"});
  auto env = as_root(served, {"endpoints", a, "--env"}, dir.path());
  INFO(env.out, env.err);
  CHECK(env.out == "CHORUS_SERVICE_ECHO=127.0.0.1:23961\n");
  auto shown = as_root(served, {"endpoints", b}, dir.path());
  INFO(shown.out, shown.err);
  CHECK(shown.out.find("echo") != std::string::npos);
  CHECK(shown.out.find("ready") != std::string::npos);
  CHECK(shown.out.find("127.0.0.1:23971") != std::string::npos);

  // b's client ends: its service stops and the run succeeds; a's runs on.
  write_file(dir / "b.go", "");
  REQUIRE(eventually([&] { return run_status(served, b, nullptr, dir.path()) == "succeeded"; }));
  CHECK(eventually([&] { return !listening(pb); }, 10));
  CHECK(listening(pa));
  CHECK(read_lines(dir / "b.after").size() == 1);

  // Another run whose service wants a's port is refused while a holds it (its replica would
  // fail its bind while its probe reached a's service).
  write_file(dir / "clash.yaml", workflow("clash", pa, "clash.go"));
  auto clash = as_root(served, {"submit", "clash.yaml"}, dir.path());
  CHECK(clash.exit_code != 0);
  INFO(clash.err);
  CHECK(clash.err.find("clash.yaml:3:11: refused: service 'echo' listens on port 23961, which a "
                       "service of your run " +
                       a + " in this instance holds") != std::string::npos);

  // The instance dies outright while a's client waits; restarted, it runs a's service again (on
  // the same port: the killed one's replica was stopped) and the client once more.
  CHECK(served.stop(SIGKILL) == 128 + SIGKILL);
  served.start();
  REQUIRE_MESSAGE(eventually([&] { return read_lines(dir / "a.env").size() == 2; }, 30),
                  served.log());
  clash = as_root(served, {"submit", "clash.yaml"}, dir.path());  // resumed, a holds it again
  CHECK(clash.exit_code != 0);
  CHECK(clash.err.find("listens on port 23961") != std::string::npos);
  write_file(dir / "a.go", "");
  REQUIRE_MESSAGE(
      eventually([&] { return run_status(served, a, nullptr, dir.path()) == "succeeded"; }),
      served.log());
  CHECK(eventually([&] { return !listening(pa); }, 10));
  CHECK(read_lines(dir / "a.after").size() == 1);
  auto status = as_root(served, {"status", a}, dir.path());
  CHECK(status.out.find("succeeded") != std::string::npos);

  // A cancelled run's service stops with it.
  write_file(dir / "c.yaml", workflow("c", pa, "c.go"));
  auto rc = as_root(served, {"submit", "c.yaml"}, dir.path());
  REQUIRE_MESSAGE(rc.exit_code == 0, rc.err);
  const std::string c = trimmed(rc.out);
  REQUIRE(eventually([&] { return file_exists(dir / "c.env"); }, 30));
  CHECK(listening(pa));
  auto cancel = as_root(served, {"cancel", c}, dir.path());
  INFO(cancel.out, cancel.err);
  CHECK(cancel.exit_code == 0);
  CHECK(run_status(served, c, nullptr, dir.path()) == "cancelled");
  CHECK(eventually([&] { return !listening(pa); }, 10));
  CHECK_FALSE(file_exists(dir / "c.after"));
}

// A served instance run as root writes a run's quorum records (and reads its `until:` files) as
// the run's submitter: the records are the user's, and a symlink in the user's folder to a place
// only root may write does not get root to write there (the round fails instead).
TEST_CASE("Integration.Serve.QuorumFilesAreWrittenAsTheSubmitterNotRoot") {
  if (!root_or_skip()) return;
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  TestUser alice("q"), bob("r");
  const std::string ahome = alice.home_in(dir.path()), bhome = bob.home_in(dir.path());
  Served served(dir);
  const std::string wf = R"Y(name: owned-rounds
tasks:
  - repeat: ens
    max_rounds: 2
    until: {file: "quorum/ens/round-{round}.json", key: /used, below: 4}
    tasks:
      - name: sim
        foreach: {d: ["1", "2"]}
        command: "true"
        quorum: {policy: static, n: 2, k: 2}
)Y";
  alice.write(ahome + "/wf.yaml", wf);
  bob.write(bhome + "/wf.yaml", wf);
  // Bob's quorum folder leads to a folder only root may write.
  const std::string guarded = dir / "root-only";
  ::mkdir(guarded.c_str(), 0755);
  REQUIRE(::symlink(guarded.c_str(), (bhome + "/quorum").c_str()) == 0);

  auto a = as_user(alice, served, {"submit", "wf.yaml"}, ahome);
  auto b = as_user(bob, served, {"submit", "wf.yaml"}, bhome);
  REQUIRE_MESSAGE(a.exit_code == 0, a.err);
  REQUIRE_MESSAGE(b.exit_code == 0, b.err);
  const std::string ra = trimmed(a.out), rb = trimmed(b.out);
  REQUIRE_MESSAGE(
      eventually([&] { return run_status(served, ra, &alice, ahome) == "succeeded"; }, 60),
      served.log());
  struct stat st {};
  REQUIRE(::stat((ahome + "/quorum/ens/round-1.json").c_str(), &st) == 0);
  CHECK(st.st_uid == alice.uid());
  CHECK(::stat((ahome + "/quorum").c_str(), &st) == 0);
  CHECK(st.st_uid == alice.uid());

  REQUIRE_MESSAGE(eventually([&] { return run_status(served, rb, &bob, bhome) == "failed"; }, 60),
                  served.log());
  CHECK_FALSE(std::filesystem::exists(guarded + "/ens"));
  auto status = as_user(bob, served, {"status", rb, "--tasks"}, bhome);
  INFO(status.out, status.err);
  CHECK(status.out.find("Permission denied") != std::string::npos);
}

TEST_CASE("Integration.Serve.AFolderTheSubmitterCannotEnterIsRefusedAtSubmission") {
  if (!root_or_skip()) return;
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  TestUser alice("w");
  const std::string ahome = alice.home_in(dir.path());
  const std::string guarded = dir / "root-only";
  ::mkdir(guarded.c_str(), 0700);  // root's: alice may not enter it (root could)
  Served served(dir);
  alice.write(ahome + "/wf.yaml",
              "name: where\ntasks:\n  - name: here\n    command: \"true\"\n"
              "  - name: there\n    command: \"true\"\n    workdir: " +
                  guarded + "\n");
  auto r = as_user(alice, served, {"submit", "wf.yaml"}, ahome);
  CHECK(r.exit_code != 0);
  INFO(r.out, r.err);
  CHECK(r.err.find("wf.yaml:5:11: refused: task 'there' would start in " + guarded) !=
        std::string::npos);
  CHECK(r.err.find("cannot enter (Permission denied); that is its workdir") != std::string::npos);
  alice.write(ahome + "/gone.yaml",
              "name: gone\ntasks:\n  - name: t\n    command: \"true\"\n"
              "    workdir: " +
                  ahome + "/nowhere\n");
  r = as_user(alice, served, {"submit", "gone.yaml"}, ahome);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("(No such file or directory)") != std::string::npos);
  // What alice may enter runs, and nothing was accepted before.
  auto list = as_user(alice, served, {"list", "--json"}, ahome);
  CHECK(list.out.find("\"where\"") == std::string::npos);
  ::chmod(guarded.c_str(), 0755);
  r = as_user(alice, served, {"submit", "wf.yaml"}, ahome);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(eventually([&] { return run_status(served, trimmed(r.out), &alice, ahome) == "succeeded"; },
                   60));
}
