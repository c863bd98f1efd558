// chorus submit --kubernetes against the REAL local cluster: the coordinator runs as a Pod of a
// chorus image built from this build (scripts/chorus-image.sh) and imported into every node,
// with the service account of deploy/k8s/rbac.yaml, and creates its task Pods itself.
#include <doctest/doctest.h>

#include <dirent.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "support/k8s_cluster.hpp"
#include "support/process.hpp"
#include "support/yaml_json.hpp"

using namespace chorus::test;
using nlohmann::json;

namespace {

struct ApiAnswer {
  long code = 0;
  json body;
};

// METHOD path [JSON body] with the admin token, through curl (the test's own view).
ApiAnswer k8s_call(const std::string& method, const std::string& path, const json& body = {}) {
  std::string token, server;
  for (const auto& line : read_lines(k8s_dir() + "/kubeconfig")) {
    if (auto at = line.find("token: "); at != std::string::npos) token = line.substr(at + 7);
    if (auto at = line.find("server: "); at != std::string::npos) server = line.substr(at + 8);
  }
  std::vector<std::string> argv = {"curl",     "-sS",
                                   "-X",       method,
                                   "--cacert", k8s_dir() + "/pki/ca.crt",
                                   "-H",       "Authorization: Bearer " + token,
                                   "-w",       "\n%{http_code}"};
  if (!body.is_null()) {
    argv.insert(argv.end(), {"-H", "Content-Type: application/json", "-d", body.dump()});
  }
  argv.push_back(server + path);
  auto r = run_process(argv, "/");
  ApiAnswer a;
  auto nl = r.out.rfind('\n');
  if (nl == std::string::npos) return a;
  a.code = std::atol(r.out.substr(nl + 1).c_str());
  a.body = json::parse(r.out.substr(0, nl), nullptr, false);
  return a;
}

std::string collection_path(const json& object) {
  std::string kind = object.value("kind", "");
  std::string ns = object["metadata"].value("namespace", "");
  if (kind == "ServiceAccount") return "/api/v1/namespaces/" + ns + "/serviceaccounts";
  std::string rbac = "/apis/rbac.authorization.k8s.io/v1/";
  if (kind == "Role") return rbac + "namespaces/" + ns + "/roles";
  if (kind == "RoleBinding") return rbac + "namespaces/" + ns + "/rolebindings";
  if (kind == "ClusterRole") return rbac + "clusterroles";
  if (kind == "ClusterRoleBinding") return rbac + "clusterrolebindings";
  return "/unknown-kind/" + kind;
}

// The objects of deploy/k8s/rbac.yaml, created through the API as `kubectl apply` would, and
// deleted again when the test ends (even when it fails).
class ShippedRbac {
 public:
  ShippedRbac() : objects_(yaml_documents(source_dir() + "/deploy/k8s/rbac.yaml")) {
    for (const auto& o : objects_) {
      auto a = k8s_call("POST", collection_path(o), o);
      INFO(o["kind"], " ", o["metadata"]["name"], ": ", a.body.dump());
      CHECK((a.code == 201 || a.code == 409));
    }
  }
  ~ShippedRbac() {
    for (const auto& o : objects_)
      (void)k8s_call("DELETE", collection_path(o) + "/" + o["metadata"].value("name", ""));
  }
  ShippedRbac(const ShippedRbac&) = delete;
  ShippedRbac& operator=(const ShippedRbac&) = delete;

  // Kubernetes 1.20's token controller gives a new account its token secret shortly after.
  bool token_ready() const {
    return eventually(
        [] {
          auto a = k8s_call("GET", "/api/v1/namespaces/default/serviceaccounts/chorus");
          return a.code == 200 && a.body.contains("secrets") && !a.body["secrets"].empty();
        },
        30);
  }

 private:
  std::vector<json> objects_;
};

// What `chorus submit` created, by its label: deleted when the test ends, whatever happened.
struct SubmissionCleanup {
  ~SubmissionCleanup() {
    for (const char* kind : {"pods", "configmaps"})
      (void)k8s_call("DELETE", std::string("/api/v1/namespaces/default/") + kind +
                                   "?labelSelector=chorus.submission&gracePeriodSeconds=0");
  }
};

std::size_t count(const std::string& path) {
  auto a = k8s_call("GET", path);
  return a.code == 200 && a.body.contains("items") ? a.body["items"].size() : 999;
}
std::size_t submissions(const char* kind) {
  return count(std::string("/api/v1/namespaces/default/") + kind +
               "?labelSelector=chorus.submission");
}

std::string pod_log(const std::string& pod) {
  return k8s_get("/api/v1/namespaces/default/pods/" + pod + "/log");
}

bool have(const char* tool) {
  return run_process({"sh", "-c", std::string("command -v ") + tool}, "/").exit_code == 0;
}

// This build's chorus as the image localhost/chorus:<version> (the default --image), imported
// into every node; built once per test binary. False (with a message) when it cannot be built.
bool chorus_image_ready() {
  static int ready = -1;
  if (ready >= 0) return ready == 1;
  ready = 0;
  if (!have("umoci") || !have("ctr")) {
    MESSAGE(
        "skipped: building the chorus image needs umoci and ctr (scripts/setup.sh installs them)");
    return false;
  }
  std::string tar = binary_dir() + "/chorus-image.tar";
  auto built =
      run_process({source_dir() + "/scripts/chorus-image.sh", "-b", chorus_bin(), tar}, "/");
  INFO(built.err);
  REQUIRE(built.exit_code == 0);
  auto imported = run_process(
      {source_dir() + "/tests/k8s/cluster.sh", "import-image", tar, "localhost/chorus"}, "/");
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  ready = 1;
  return true;
}

// The pid of the process whose command line holds the argument `arg` (0 when none): the
// coordinator inside its Pod, found by the test's own state folder, which no other run has.
pid_t process_with_argument(const std::string& arg) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  pid_t found = 0;
  while (dirent* e = readdir(proc)) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t start = 0;
    while (start < cmdline.size() && found == 0) {
      std::size_t end = cmdline.find('\0', start);
      if (end == std::string::npos) end = cmdline.size();
      if (cmdline.compare(start, end - start, arg) == 0) found = pid;
      start = end + 1;
    }
    if (found != 0) break;
  }
  closedir(proc);
  return found;
}

// `chorus submit --kubernetes wf.yaml EXTRA...` in `dir`.
ProcessResult submit_wf(const std::string& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {chorus_bin(), "submit", "--kubernetes", "wf.yaml"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process(argv, dir);
}

// The coordinator Pod `chorus submit --kubernetes` printed ("" when it printed none).
std::string submitted_pod(const ProcessResult& r) {
  const std::string prefix = "Submitted coordinator Pod ";
  if (r.out.rfind(prefix, 0) != 0) return "";
  return r.out.substr(prefix.size(), r.out.find(' ', prefix.size()) - prefix.size());
}

// The Pod's status once it ended (phase Succeeded or Failed), or as last seen after `seconds`.
json status_at_end(const std::string& pod, double seconds = 180) {
  json status = json::object();
  (void)eventually(
      [&] {
        auto a = k8s_call("GET", "/api/v1/namespaces/default/pods/" + pod);
        if (a.code != 200) return false;
        status = a.body.value("status", json::object());
        std::string phase = status.value("phase", "");
        return phase == "Succeeded" || phase == "Failed";
      },
      seconds);
  return status;
}

// SIGKILL to the coordinator inside `pod` (found by its state folder), then its Pod Failed.
bool kill_coordinator(const std::string& state_dir, const std::string& pod) {
  const pid_t pid = process_with_argument(state_dir);
  if (pid <= 0 || ::kill(pid, SIGKILL) != 0) return false;
  return status_at_end(pod, 60).value("phase", "") == "Failed";
}

// The Pods and Services of one run (by its chorus.run label), deleted at once when the test
// ends, whatever happened.
struct RunObjectsCleanup {
  std::string run;
  ~RunObjectsCleanup() {
    for (const char* kind : {"pods", "services"}) {
      auto listed = k8s_call("GET", std::string("/api/v1/namespaces/default/") + kind +
                                        "?labelSelector=chorus.run%3D" + run);
      for (const auto& o : listed.body.value("items", json::array()))
        (void)k8s_call("DELETE", std::string("/api/v1/namespaces/default/") + kind + "/" +
                                     o["metadata"]["name"].get<std::string>() +
                                     "?gracePeriodSeconds=0");
    }
  }
};

}  // namespace

TEST_CASE("K8s.Submit.CoordinatorPodRunsTheDagAndLeavesNothing") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  if (!chorus_image_ready()) return;

  ShippedRbac rbac;
  REQUIRE(rbac.token_ready());
  SubmissionCleanup cleanup;
  TempDir dir;
  write_file(dir / "wf.yaml", R"(name: subdag
defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
tasks:
  - name: make
    command: echo made > made.txt
  - name: sweep
    after: [make]
    foreach: {i: [1, 2, 3]}
    command: cat made.txt > out-$i.txt && echo "$CHORUS_NODE" >> out-$i.txt
  - name: join
    after: [sweep]
    command: cat out-1.txt out-2.txt out-3.txt > all.txt
)");
  auto r = submit_wf(dir.path(), {"--kubeconfig", kc});
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("is on a loopback address: the coordinator Pod uses its node's network") !=
        std::string::npos);
  const std::string pod = submitted_pod(r);
  CHECK(pod.rfind("chorus-subdag-", 0) == 0);
  // Submit waited for the Pod to start (its image and volumes were fine).
  CHECK((r.out.find("(running on node chorus-k8s-n") != std::string::npos ||
         r.out.find("(already finished;") != std::string::npos));
  CHECK(r.out.find("kubectl -n default logs -f " + pod) != std::string::npos);
  CHECK(r.out.find("chorus status --state " + dir.path() + "/.chorus") != std::string::npos);

  // The coordinator Pod succeeds with exit code 0.
  const json status = status_at_end(pod);
  INFO("coordinator log:\n", pod_log(pod));
  REQUIRE(status.value("phase", "") == "Succeeded");
  CHECK(status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0);

  // Its task Pods ran on real nodes, in the hostPath workdir the submitter sees.
  std::set<std::string> nodes;
  const auto listed = k8s_call("GET", "/api/v1/nodes");
  for (const auto& n : listed.body["items"]) nodes.insert(n["metadata"]["name"].get<std::string>());
  CHECK(nodes.size() == 2);
  REQUIRE(file_exists(dir / "all.txt"));
  INFO("all.txt:\n", read_file(dir / "all.txt"));
  auto lines = read_lines(dir / "all.txt");
  REQUIRE(lines.size() == 6);
  for (std::size_t i = 0; i < 6; i += 2) {
    CHECK(lines[i] == "made");
    CHECK(nodes.count(lines[i + 1]) == 1);
  }
  // The journal is in the workdir: chorus status reads it here.
  auto st = run_process({chorus_bin(), "status", "--state", dir / ".chorus"}, dir.path());
  INFO(st.out, st.err);
  CHECK(st.exit_code == 0);
  CHECK(st.out.find("subdag-1") != std::string::npos);
  CHECK(st.out.find("succeeded") != std::string::npos);
  auto log = run_process({chorus_bin(), "logs", "subdag-1", "join", "--state", dir / ".chorus"},
                         dir.path());
  CHECK(log.exit_code == 0);

  // Nothing of the run is left: the coordinator deleted its task Pods; deleting the coordinator
  // Pod garbage-collects its ConfigMap (ownerReference).
  CHECK(count("/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dsubdag-1") == 0);
  CHECK(submissions("configmaps") == 1);
  CHECK(k8s_call("DELETE", "/api/v1/namespaces/default/pods/" + pod).code == 200);
  CHECK(eventually([] { return submissions("pods") == 0 && submissions("configmaps") == 0; }, 60));
}

// The coordinator Pod owns its run's Pods and Services: when it dies without cleaning up (here
// its process SIGKILLed inside the Pod) and is then deleted, Kubernetes' garbage collector
// removes them, so nothing of the run is left running.
TEST_CASE("K8s.Submit.DeletingADeadCoordinatorPodRemovesItsTaskPodsAndServices") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  if (!chorus_image_ready()) return;
  ShippedRbac rbac;
  REQUIRE(rbac.token_ready());
  SubmissionCleanup cleanup;
  RunObjectsCleanup objects{"orphans-1"};
  TempDir dir;
  write_file(dir / "wf.yaml", R"(name: orphans
defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
services:
  - name: web
    command: mkdir -p /www && echo up > /www/index.html && exec httpd -f -p {port} -h /www
    ready: {http: 8080, path: /index.html, timeout: 90s}
    restart: {policy: never}
tasks:
  - name: long
    foreach: {i: [1, 2]}
    uses: [web]
    command: sleep 600
)");
  auto r = submit_wf(dir.path(), {"--kubeconfig", kc});
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  const std::string pod = submitted_pod(r);
  REQUIRE_FALSE(pod.empty());
  const std::string run_pods =
      "/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dorphans-1";
  const std::string run_services =
      "/api/v1/namespaces/default/services?labelSelector=chorus.run%3Dorphans-1";
  // The service replica and both tasks running, every one owned by the coordinator's Pod.
  REQUIRE_MESSAGE(eventually(
                      [&] {
                        auto a = k8s_call("GET", run_pods);
                        std::size_t running = 0;
                        for (const auto& p : a.body.value("items", json::array()))
                          running += p["status"].value("phase", "") == "Running";
                        return running == 3;
                      },
                      180),
                  "coordinator log:\n", pod_log(pod));
  const auto coordinator = k8s_call("GET", "/api/v1/namespaces/default/pods/" + pod);
  const std::string uid = coordinator.body["metadata"].value("uid", "");
  REQUIRE_FALSE(uid.empty());
  std::vector<json> objects_of_run;
  for (const auto& path : {run_pods, run_services})
    for (const auto& o : k8s_call("GET", path).body.value("items", json::array()))
      objects_of_run.push_back(o);
  REQUIRE(objects_of_run.size() == 4);  // 3 Pods, 1 Service
  for (const auto& o : objects_of_run) {
    INFO(o["kind"], " ", o["metadata"]["name"]);
    REQUIRE(o["metadata"].contains("ownerReferences"));
    const auto& owner = o["metadata"]["ownerReferences"][0];
    CHECK(owner["kind"] == "Pod");
    CHECK(owner["name"] == pod);
    CHECK(owner["uid"] == uid);
  }

  // The coordinator dies without a word: SIGKILL to its process inside the Pod. Its task Pods
  // run on, nobody left to delete them.
  REQUIRE(kill_coordinator(dir / ".chorus", pod));
  CHECK(count(run_pods) == 3);

  // Deleting the dead coordinator's Pod takes its run with it.
  CHECK(k8s_call("DELETE", "/api/v1/namespaces/default/pods/" + pod).code == 200);
  CHECK(eventually([&] { return count(run_pods) == 0 && count(run_services) == 0; }, 120));
  CHECK(eventually([] { return submissions("pods") == 0 && submissions("configmaps") == 0; }, 60));
}

// `chorus submit --kubernetes --resume RUN`: a coordinator SIGKILLed inside its Pod left its
// task Pods running; a new coordinator Pod resumes the run from the hostPath journal, adopts
// them (and becomes their owner, so deleting the dead one's Pod spares them), runs the rest,
// and no task runs twice. Refused while the first coordinator still runs.
TEST_CASE("K8s.Submit.AResumedSubmissionAdoptsTheDeadCoordinatorsPodsAndRunsNothingTwice") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  if (!chorus_image_ready()) return;
  ShippedRbac rbac;
  REQUIRE(rbac.token_ready());
  SubmissionCleanup cleanup;
  RunObjectsCleanup objects{"resumed-1"};
  TempDir dir;
  write_file(dir / "wf.yaml", R"(name: resumed
defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
tasks:
  - name: step
    foreach: {i: [1, 2]}
    command: echo "$i" >> starts.txt && while [ ! -e go ]; do sleep 0.2; done
  - name: join
    after: [step]
    command: echo joined > joined.txt
)");
  auto submit = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--kubeconfig", kc});
    return submit_wf(dir.path(), extra);
  };
  auto first = submit({});
  INFO(first.out, first.err);
  REQUIRE(first.exit_code == 0);
  const std::string old_pod = submitted_pod(first);
  REQUIRE_FALSE(old_pod.empty());
  const std::string run_pods =
      "/api/v1/namespaces/default/pods?labelSelector=chorus.run%3Dresumed-1";
  REQUIRE_MESSAGE(eventually([&] { return read_lines(dir / "starts.txt").size() == 2; }, 180),
                  "coordinator log:\n", pod_log(old_pod));

  // While the first coordinator runs, a resume is refused and creates nothing.
  auto early = submit({"--resume", "resumed-1"});
  CHECK(early.exit_code == 3);
  CHECK(early.err.find("the coordinator Pod " + old_pod + " is still running on the journal " +
                       dir.path() + "/.chorus") != std::string::npos);
  CHECK(submissions("pods") == 1);
  // Nor is a run that is not in the journal.
  auto unknown = submit({"--resume", "nosuch-7"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("--resume nosuch-7: ") != std::string::npos);

  REQUIRE(kill_coordinator(dir / ".chorus", old_pod));
  CHECK(count(run_pods) == 2);  // its two steps run on

  auto again = submit({"--resume", "resumed-1"});
  INFO(again.out, again.err);
  REQUIRE(again.exit_code == 0);
  const std::string new_pod = submitted_pod(again);
  REQUIRE_FALSE(new_pod.empty());
  CHECK(new_pod != old_pod);
  CHECK(again.out.find("Resuming run resumed-1") != std::string::npos);
  // The new coordinator adopted both steps: they now name its Pod as their owner.
  const std::string new_uid = k8s_call("GET", "/api/v1/namespaces/default/pods/" + new_pod)
                                  .body["metadata"]
                                  .value("uid", "");
  REQUIRE_FALSE(new_uid.empty());
  CHECK_MESSAGE(
      eventually(
          [&] {
            auto a = k8s_call("GET", run_pods);
            std::size_t owned = 0;
            for (const auto& p : a.body.value("items", json::array()))
              owned += p["metadata"].value("ownerReferences", json::array()).dump().find(new_uid) !=
                       std::string::npos;
            return owned == 2;
          },
          60),
      "coordinator log:\n", pod_log(new_pod));
  // The dead coordinator's Pod goes; the adopted steps stay.
  CHECK(k8s_call("DELETE", "/api/v1/namespaces/default/pods/" + old_pod).code == 200);
  CHECK(eventually(
      [&] { return k8s_call("GET", "/api/v1/namespaces/default/pods/" + old_pod).code == 404; },
      60));
  sleep_ms(3000);  // the garbage collector's time to act, had it anything to collect
  CHECK(count(run_pods) == 2);

  write_file(dir / "go", "");
  const json status = status_at_end(new_pod);
  INFO("coordinator log:\n", pod_log(new_pod));
  CHECK(status.value("phase", "") == "Succeeded");
  CHECK(read_lines(dir / "starts.txt").size() == 2);  // each step ran once
  CHECK(file_exists(dir / "joined.txt"));
  auto st =
      run_process({chorus_bin(), "status", "resumed-1", "--state", dir / ".chorus"}, dir.path());
  CHECK(st.out.find("succeeded") != std::string::npos);
}

// A PersistentVolume (hostPath, this machine's directory: the test cluster's nodes are this
// machine) and its claim, made through the API and removed when the test ends.
class TestVolumeClaim {
 public:
  TestVolumeClaim(const std::string& name, const std::string& path) : name_(name) {
    json pv = {{"apiVersion", "v1"},
               {"kind", "PersistentVolume"},
               {"metadata", {{"name", name}}},
               {"spec",
                {{"capacity", {{"storage", "1Gi"}}},
                 {"accessModes", {"ReadWriteMany"}},
                 {"persistentVolumeReclaimPolicy", "Retain"},
                 {"storageClassName", "chorus-test"},
                 {"hostPath", {{"path", path}, {"type", "Directory"}}}}}};
    json pvc = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"accessModes", {"ReadWriteMany"}},
                  {"storageClassName", "chorus-test"},
                  {"volumeName", name},
                  {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
    auto a = k8s_call("POST", "/api/v1/persistentvolumes", pv);
    INFO(a.body.dump());
    CHECK(a.code == 201);
    auto b = k8s_call("POST", "/api/v1/namespaces/default/persistentvolumeclaims", pvc);
    INFO(b.body.dump());
    CHECK(b.code == 201);
  }
  ~TestVolumeClaim() {
    (void)k8s_call("DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/" + name_);
    (void)k8s_call("DELETE", "/api/v1/persistentvolumes/" + name_);
  }
  TestVolumeClaim(const TestVolumeClaim&) = delete;
  TestVolumeClaim& operator=(const TestVolumeClaim&) = delete;
  bool bound() const {
    return eventually(
        [&] {
          auto a = k8s_call("GET", "/api/v1/namespaces/default/persistentvolumeclaims/" + name_);
          return a.code == 200 && a.body["status"].value("phase", "") == "Bound";
        },
        60);
  }

 private:
  std::string name_;
};

// --volume-claim: the working directory and the journal on a PersistentVolumeClaim mounted at
// --workdir in the coordinator and in every task Pod; nothing on the nodes' own directory.
TEST_CASE("K8s.Submit.AVolumeClaimHoldsTheWorkdirAndTheJournal") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  if (!chorus_image_ready()) return;
  ShippedRbac rbac;
  REQUIRE(rbac.token_ready());
  SubmissionCleanup cleanup;
  TempDir dir, volume;
  // A mount path this machine does not have: a task that used a hostPath instead would make it.
  const std::string mount = "/chorus-claim-" + std::to_string(::getpid());
  REQUIRE_FALSE(file_exists(mount));
  TestVolumeClaim claim("chorus-test-claim-" + std::to_string(::getpid()), volume.path());
  const std::string claim_name = "chorus-test-claim-" + std::to_string(::getpid());
  REQUIRE(claim.bound());
  write_file(dir / "wf.yaml", R"(name: claimed
defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
tasks:
  - name: make
    command: echo made > made.txt
  - name: sweep
    after: [make]
    foreach: {i: [1, 2]}
    command: cat made.txt > out-$i.txt && pwd >> out-$i.txt
  - name: join
    after: [sweep]
    command: cat out-1.txt out-2.txt > all.txt
)");
  auto submit = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--kubeconfig", kc});
    return submit_wf(dir.path(), extra);
  };
  // Bad input first: nothing is created.
  auto missing = submit({"--volume-claim", "nosuch"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("PersistentVolumeClaim 'nosuch' does not exist in namespace 'default'") !=
        std::string::npos);
  auto outside = submit({"--volume-claim", claim_name, "--workdir", mount, "--state", "/tmp/x"});
  CHECK(outside.exit_code == 2);
  CHECK(outside.err.find("is outside the working directory " + mount) != std::string::npos);
  CHECK(submissions("pods") == 0);

  auto r = submit({"--volume-claim", claim_name, "--workdir", mount});
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("on PersistentVolumeClaim " + claim_name) != std::string::npos);
  const std::string pod = submitted_pod(r);
  REQUIRE_FALSE(pod.empty());
  const json status = status_at_end(pod);
  INFO("coordinator log:\n", pod_log(pod));
  REQUIRE(status.value("phase", "") == "Succeeded");
  // Everything landed on the volume, each task in the claim's mount; the journal too.
  REQUIRE(file_exists(volume / "all.txt"));
  CHECK(read_lines(volume / "all.txt") == std::vector<std::string>{"made", mount, "made", mount});
  auto st =
      run_process({chorus_bin(), "status", "claimed-1", "--state", volume / ".chorus"}, dir.path());
  INFO(st.out, st.err);
  CHECK(st.exit_code == 0);
  CHECK(st.out.find("succeeded") != std::string::npos);
  CHECK_FALSE(file_exists(mount));  // no hostPath of that path was made on the node
  CHECK(k8s_call("DELETE", "/api/v1/namespaces/default/pods/" + pod).code == 200);
  CHECK(eventually([] { return submissions("pods") == 0; }, 60));
}

TEST_CASE("K8s.Submit.MissingServiceAccountOrRightsAreExplainedAndCreateNothing") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  SubmissionCleanup cleanup;
  TempDir dir;
  write_file(dir / "wf.yaml", R"(name: nosa
defaults:
  image: localhost/busybox:1.35
tasks:
  - name: a
    command: "true"
)");
  auto missing = submit_wf(dir.path(), {"--kubeconfig", kc, "--service-account", "nobody"});
  INFO(missing.out, missing.err);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("service account 'nobody' does not exist in namespace 'default' on "
                         "https://127.0.0.1:") != std::string::npos);
  CHECK(missing.err.find("deploy/k8s/rbac.yaml") != std::string::npos);
  CHECK(missing.err.find("or pass --service-account NAME") != std::string::npos);

  // An account without its Role: the rights it lacks, named.
  json sa = {{"apiVersion", "v1"},
             {"kind", "ServiceAccount"},
             {"metadata", {{"name", "chorus-norights"}, {"namespace", "default"}}}};
  REQUIRE(k8s_call("POST", "/api/v1/namespaces/default/serviceaccounts", sa).code == 201);
  auto bare = submit_wf(dir.path(), {"--kubeconfig", kc, "--service-account", "chorus-norights"});
  (void)k8s_call("DELETE", "/api/v1/namespaces/default/serviceaccounts/chorus-norights");
  INFO(bare.out, bare.err);
  CHECK(bare.exit_code == 2);
  CHECK(
      bare.err.find(
          "service account 'chorus-norights' in namespace 'default' may not create "
          "pods, get pods, list pods, watch pods, delete pods, deletecollection pods, patch pods, "
          "get pods/log, list nodes") != std::string::npos);
  CHECK(submissions("pods") == 0);
  CHECK(submissions("configmaps") == 0);
}

TEST_CASE("K8s.Submit.AnImageThatCannotStartIsReportedAndDeleted") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  ShippedRbac rbac;
  REQUIRE(rbac.token_ready());
  SubmissionCleanup cleanup;
  TempDir dir;
  write_file(dir / "wf.yaml",
             "name: noimage\ndefaults: {image: localhost/busybox:1.35}\ntasks:\n  - name: a\n"
             "    command: \"true\"\n");
  auto r = submit_wf(dir.path(), {"--kubeconfig", kc, "--image", "localhost/no-chorus:1",
                                  "--image-pull-policy", "Never"});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot start: Kubernetes: ErrImageNeverPull for image localhost/no-chorus:1") !=
        std::string::npos);
  CHECK(r.err.find("scripts/chorus-image.sh") != std::string::npos);
  CHECK(eventually([] { return submissions("pods") == 0 && submissions("configmaps") == 0; }, 60));
}

TEST_CASE("K8s.Submit.BadInputIsRefusedBeforeAnythingIsCreated") {
  auto kc = k8s_kubeconfig();
  if (kc.empty()) return;
  SubmissionCleanup cleanup;
  TempDir dir;
  auto submit = [&](std::vector<std::string> extra) { return submit_wf(dir.path(), extra); };
  write_file(dir / "wf.yaml", "name: bad\ntasks:\n  - name: a\n    command: [unclosed\n");
  auto parse = submit({"--kubeconfig", kc});
  CHECK(parse.exit_code == 2);
  CHECK(parse.err.find("wf.yaml:5:1: YAML syntax error") != std::string::npos);

  write_file(dir / "wf.yaml", "name: noimg\ntasks:\n  - name: a\n    command: \"true\"\n");
  auto noimg = submit({"--kubeconfig", kc});
  CHECK(noimg.exit_code == 2);
  CHECK(noimg.err.find("wf.yaml:3:11: task 'a' has no image") != std::string::npos);

  write_file(dir / "wf.yaml",
             "name: ok\ndefaults: {image: localhost/busybox:1.35}\ntasks:\n  - name: a\n"
             "    command: \"true\"\n");
  auto ns = submit({"--kubeconfig", kc, "--namespace", "nope"});
  CHECK(ns.exit_code == 2);
  CHECK(ns.err.find("namespace 'nope' does not exist on https://127.0.0.1:") != std::string::npos);

  auto none = submit({"--kubeconfig", dir / "no-such-kubeconfig"});
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("no kubeconfig at " + (dir / "no-such-kubeconfig")) != std::string::npos);

  std::string text = read_file(kc);
  auto at = text.find("https://127.0.0.1:");
  text.replace(at, text.find('\n', at) - at, "https://127.0.0.1:1");
  write_file(dir / "down.kubeconfig", text);
  auto down = submit({"--kubeconfig", dir / "down.kubeconfig"});
  CHECK(down.exit_code == 3);
  CHECK(down.err.find("the Kubernetes API server at https://127.0.0.1:1 did not answer") !=
        std::string::npos);

  auto slurmish = submit({"--kubeconfig", kc, "-N", "4"});
  CHECK(slurmish.exit_code == 2);
  CHECK(slurmish.err.find("--nodes is for --slurm") != std::string::npos);

  CHECK(submissions("pods") == 0);
  CHECK(submissions("configmaps") == 0);
}
